// format_time_breakdown (time_breakdown.hpp).
#include "reports/time_breakdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace attn {

namespace {
std::string seconds(double s) { return s < 10 ? fmt::format("{:.2f} s", s) : fmt::format("{:.1f} s", s); }
}  // namespace

std::string format_time_breakdown(const RunTotals& t) {
  if (t.cases == 0) return {};
  const double slot_time = t.wall_s * std::max(1, t.slots);
  auto share = [&](double s) {
    return slot_time > 0 ? fmt::format("{} ({:.0f}%)", seconds(s), 100.0 * s / slot_time) : seconds(s);
  };
  const CasePhases& p = t.phases;
  // In the order a case runs them; phases that never ran are left out.
  const std::pair<const char*, const std::optional<double>*> phases[] = {
      {"prepare", &p.prepare_s},     {"inputs", &p.inputs_s},      {"reference", &p.reference_s},
      {"check", &p.check_s},         {"cool-down", &p.cooldown_s}, {"warm-up", &p.warmup_s},
      {"timed samples", &p.timed_s}, {"metrics", &p.metrics_s},    {"other", &p.other_s},
  };
  std::string line =
      fmt::format("time: {} wall on {} worker slot{}; {} case{} took {}:", seconds(t.wall_s), t.slots,
                  t.slots == 1 ? "" : "s", t.cases, t.cases == 1 ? "" : "s", share(t.case_wall_s));
  const char* sep = " ";
  for (const auto& [name, value] : phases) {
    if (!*value) continue;
    line += fmt::format("{}{} {}", sep, name, share(**value));
    sep = ", ";
  }
  line += "\n";
  line += fmt::format("      outside the cases: worker starts {}, hand-off {}, idle {}\n",
                      share(t.worker_start_s), share(t.handoff_s), share(t.idle_s));
  return line;
}

}  // namespace attn
