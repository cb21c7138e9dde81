// Status names as they appear in results.jsonl.
#include "profiling/result.hpp"

#include <array>
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

const std::string& variant_label(const CaseResult& c) { return c.variant.empty() ? c.kernel : c.variant; }

}  // namespace attn
