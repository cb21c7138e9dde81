// The timing loop shared by every backend: warm-up by time, then samples until the median's
// relative noise is under the target or the budget is spent (docs/design.md "Measurement protocol").
#pragma once
#include <functional>

#include "profiling/protocol.hpp"
#include "profiling/result.hpp"

namespace attn {

// Host time [s] of the two halves of measure_samples.
struct SamplingSpan {
  double warmup_s = 0;
  double sampling_s = 0;
};

// `sample_ms` runs one timed sample and returns its duration [ms] (per launch). `now_s` is a
// monotonic clock [s]; injectable for tests. The stopping rule is spelled out in sampler.cpp.
// `span`, when given, receives the time spent warming up and sampling.
TimingStats measure_samples(const Protocol& protocol, const std::function<double()>& sample_ms,
                            const std::function<double()>& now_s = {}, SamplingSpan* span = nullptr);

double monotonic_seconds();

}  // namespace attn
