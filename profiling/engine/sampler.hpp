// The timing loop shared by every backend: warm-up by time, then samples until the median's
// relative noise is under the target or the budget is spent (docs/design.md "Measurement protocol").
#pragma once
#include <functional>

#include "profiling/protocol.hpp"
#include "profiling/result.hpp"

namespace attn {

// `sample_ms` runs one timed sample and returns its duration [ms] (per launch). `now_s` is a
// monotonic clock [s]; injectable for tests. The stopping rule is spelled out in sampler.cpp.
TimingStats measure_samples(const Protocol& protocol, const std::function<double()>& sample_ms,
                            const std::function<double()>& now_s = {});

double monotonic_seconds();

}  // namespace attn
