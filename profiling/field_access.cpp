// The non-template accessors of field_access.hpp: enum and text fields with their checks.
#include "profiling/field_access.hpp"

#include <algorithm>
#include <charconv>

namespace attn::field_access {

FieldValue get_status(const CaseResult& c) { return std::string(to_string(c.status)); }
std::string set_status(CaseResult& c, const FieldValue& v) {
  std::string s;
  if (auto why = from_value(v, s); !why.empty()) return why;
  const auto st = parse_status(s);
  if (!st) return "expected ok, skipped, mismatch, oom, fault, timeout or error, got \"" + s + "\"";
  c.status = *st;
  return {};
}

FieldValue get_metrics_status(const CaseResult& c) {
  if (c.metrics_status == MetricsStatus::not_attempted) return std::monostate{};
  return std::string(to_string(c.metrics_status));
}
std::string set_metrics_status(CaseResult& c, const FieldValue& v) {
  std::string s;
  if (auto why = from_value(v, s); !why.empty()) return why;
  const auto st = parse_metrics_status(s);
  if (!st) return std::string("expected ") + kMetricsStatusAllowed + ", got \"" + s + "\"";
  c.metrics_status = *st;
  return {};
}

// "a=1;b=2" in the knobs' (sorted) order.
FieldValue get_knobs(const CaseResult& c) {
  std::string s;
  for (const auto& [name, value] : c.knobs) s += (s.empty() ? "" : ";") + name + "=" + std::to_string(value);
  return s;
}
std::string set_knobs(CaseResult& c, const FieldValue& v) {
  std::string s;
  if (auto why = from_value(v, s); !why.empty()) return why;
  Knobs knobs;
  std::size_t start = 0;
  while (start < s.size()) {
    const std::size_t end = std::min(s.find(';', start), s.size());
    const std::string item = s.substr(start, end - start);
    const std::size_t eq = item.find('=');
    int value = 0;
    const char* last = item.data() + item.size();
    if (eq == std::string::npos || eq == 0 ||
        std::from_chars(item.data() + eq + 1, last, value).ptr != last || eq + 1 == item.size())
      return "expected name=integer;..., got \"" + item + "\"";
    knobs[item.substr(0, eq)] = value;
    start = end + 1;
  }
  c.knobs = std::move(knobs);
  return {};
}

FieldValue get_dtype(const CaseResult& c) { return std::string(to_string(c.problem.dtype)); }
std::string set_dtype(CaseResult& c, const FieldValue& v) {
  std::string s;
  if (auto why = from_value(v, s); !why.empty()) return why;
  const auto dt = parse_dtype(s);
  if (!dt) return "expected fp16, bf16 or fp32, got \"" + s + "\"";
  c.problem.dtype = *dt;
  return {};
}

FieldValue get_pass(const CaseResult& c) { return std::string(to_string(c.problem.pass)); }
std::string set_pass(CaseResult& c, const FieldValue& v) {
  std::string s;
  if (auto why = from_value(v, s); !why.empty()) return why;
  const auto pass = parse_pass(s);
  if (!pass) return std::string("expected ") + kPassAllowed + ", got \"" + s + "\"";
  c.problem.pass = *pass;
  return {};
}

FieldValue get_select_seed(const CaseResult& c) { return static_cast<std::int64_t>(c.problem.select.seed); }
std::string set_select_seed(CaseResult& c, const FieldValue& v) {
  std::int64_t seed = 0;
  if (auto why = from_value(v, seed); !why.empty()) return why;
  if (seed < 0) return "a seed >= 0, got " + std::to_string(seed);
  c.problem.select.seed = static_cast<std::uint64_t>(seed);
  return {};
}

}  // namespace attn::field_access
