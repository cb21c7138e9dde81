// The measured-case rule and the baseline lookup (case_query.hpp).
#include "reports/case_query.hpp"

#include <cmath>

namespace attn {

std::optional<double> timed_median_ms(const CaseResult& c) {
  if (!c.timing) return std::nullopt;
  const double m = c.timing->median_ms;
  if (!std::isfinite(m) || !(m > 0)) return std::nullopt;
  return m;
}

std::optional<double> measured_median_ms(const CaseResult& c) {
  if (c.status != Status::ok) return std::nullopt;
  return timed_median_ms(c);
}

bool is_measured(const CaseResult& c) { return measured_median_ms(c).has_value(); }

std::optional<double> baseline_median_ms(const std::vector<CaseResult>& cases, const std::string& baseline,
                                         const Problem& p) {
  std::optional<double> best;
  if (baseline.empty()) return best;
  for (const CaseResult& c : cases) {
    if (variant_label(c) != baseline || !(c.problem == p)) continue;
    if (const auto m = measured_median_ms(c); m && (!best || *m < *best)) best = m;
  }
  return best;
}

std::optional<double> speedup_over(const std::vector<CaseResult>& cases, const std::string& baseline,
                                   const CaseResult& c) {
  const auto m = timed_median_ms(c);
  if (!m) return std::nullopt;
  const auto base = baseline_median_ms(cases, baseline, c.problem);
  if (!base) return std::nullopt;
  return *base / *m;
}

}  // namespace attn
