// Status and metrics-status names as they appear in results.jsonl.
#include "profiling/result.hpp"

#include <algorithm>
#include <array>
#include <ctime>
#include <utility>

namespace attn {

namespace {
constexpr std::array<std::pair<Status, std::string_view>, 7> kStatusNames{{
    {Status::ok, "ok"},
    {Status::skipped, "skipped"},
    {Status::mismatch, "mismatch"},
    {Status::oom, "oom"},
    {Status::fault, "fault"},
    {Status::timeout, "timeout"},
    {Status::error, "error"},
}};

constexpr std::array<std::pair<MetricsStatus, std::string_view>, 5> kMetricsStatusNames{{
    {MetricsStatus::not_attempted, ""},
    {MetricsStatus::ok, "ok"},
    {MetricsStatus::off, "off"},
    {MetricsStatus::unavailable, "unavailable"},
    {MetricsStatus::failed, "failed"},
}};
}  // namespace

std::string_view to_string(Status s) {
  for (const auto& [st, name] : kStatusNames)
    if (st == s) return name;
  return "error";
}

std::optional<Status> parse_status(std::string_view s) {
  for (const auto& [st, name] : kStatusNames)
    if (name == s) return st;
  return std::nullopt;
}

std::string_view to_string(MetricsStatus s) {
  for (const auto& [st, name] : kMetricsStatusNames)
    if (st == s) return name;
  return "";
}

std::optional<MetricsStatus> parse_metrics_status(std::string_view s) {
  for (const auto& [st, name] : kMetricsStatusNames)
    if (name == s) return st;
  return std::nullopt;
}

const std::string& variant_label(const CaseResult& c) { return c.variant.empty() ? c.kernel : c.variant; }

namespace {
constexpr PhaseField kPhases[] = {
    {"prepare_s", &CasePhases::prepare_s},     {"inputs_s", &CasePhases::inputs_s},
    {"reference_s", &CasePhases::reference_s}, {"check_s", &CasePhases::check_s},
    {"cooldown_s", &CasePhases::cooldown_s},   {"warmup_s", &CasePhases::warmup_s},
    {"timed_s", &CasePhases::timed_s},         {"metrics_s", &CasePhases::metrics_s},
    {"other_s", &CasePhases::other_s},
};
}  // namespace

std::span<const PhaseField> case_phase_fields() { return kPhases; }

void add_phases(CasePhases& into, const CasePhases& from) {
  for (const auto& [key, m] : kPhases)
    if (from.*m) into.*m = (into.*m).value_or(0.0) + *(from.*m);
}

void add_totals(RunTotals& into, const RunTotals& from, bool side_by_side) {
  into.wall_s = side_by_side ? std::max(into.wall_s, from.wall_s) : into.wall_s + from.wall_s;
  into.slots = side_by_side ? into.slots + from.slots : std::max(into.slots, from.slots);
  into.cases += from.cases;
  into.case_wall_s += from.case_wall_s;
  into.worker_start_s += from.worker_start_s;
  into.handoff_s += from.handoff_s;
  into.idle_s += from.idle_s;
  add_phases(into.phases, from.phases);
}

void add_device(std::vector<RunDevice>& devices, const RunDevice& d) {
  for (const RunDevice& e : devices)
    if (e.host == d.host && e.index == d.index && e.uuid == d.uuid && e.name == d.name) return;
  devices.push_back(d);
}

double phases_sum(const CasePhases& p) {
  double s = 0;
  for (const auto& [key, m] : kPhases) s += (p.*m).value_or(0.0);
  return s;
}

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string new_run_id(const std::string& name) {
  return utc_now("%Y%m%d-%H%M%S") + (name.empty() ? "" : "-" + name);
}

}  // namespace attn
