// "Where the time went" for people: a run's totals (RunTotals) as the lines the CLI prints after its
// summary table, with each phase's share of the workers' time (wall time x worker slots).
#pragma once
#include <string>

#include "profiling/result.hpp"

namespace attn {

// Two lines, each ending in "\n"; empty when the totals hold no case with phases. E.g.
// "time: 41.2 s wall on 1 worker slot; 60 cases took 39.8 s: timed samples 3.3 s (8%), ..."
// "      outside the cases: worker starts 1.2 s (3%), hand-off 0.1 s (0%), idle 0.4 s (1%)"
std::string format_time_breakdown(const RunTotals& t);

}  // namespace attn
