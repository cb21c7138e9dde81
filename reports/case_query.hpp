// The one rule every report, summary, plot, compare, crossover and figure uses to decide whether a
// case has a usable timed median and counts as measured, and the one baseline lookup built on it
// (docs/reports.md, "Which cases count as measured").
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "profiling/result.hpp"

namespace attn {

// The case's own median [ms] when it is usable: a timing record whose median is finite and above
// 0 (a 0 or NaN median is a broken record, never a time). Tables that list every case show it
// whatever the status, next to that status.
std::optional<double> timed_median_ms(const CaseResult& c);

// The median of a measured case: status ok and a usable timed median. Only measured cases count
// as "measured" (kernel counts, observations, figures, compare, crossover) or serve as baselines.
std::optional<double> measured_median_ms(const CaseResult& c);
bool is_measured(const CaseResult& c);

// The fastest measured median among the cases whose variant label (variant_label()) is
// `baseline` and whose problem equals `p`; nullopt when `baseline` is empty or none is measured.
std::optional<double> baseline_median_ms(const std::vector<CaseResult>& cases, const std::string& baseline,
                                         const Problem& p);

// The baseline median of the case's problem / the case's timed median, when both exist.
std::optional<double> speedup_over(const std::vector<CaseResult>& cases, const std::string& baseline,
                                   const CaseResult& c);

}  // namespace attn
