// Warm-up and the stopping rule.
#include "profiling/engine/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "profiling/engine/stats.hpp"

namespace attn {

double monotonic_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// Stopping rule, in order:
//   1. max_samples reached;
//   2. at least min_samples and the median's noise <= target  -> converged;
//   3. the time budget max_time_s spent and at least 3 samples (the budget beats min_samples so a
//      slow CPU case cannot run for minutes; `converged` stays false and the record says so).
TimingStats measure_samples(const Protocol& p, const std::function<double()>& sample_ms,
                            const std::function<double()>& now_s, SamplingSpan* span) {
  const auto now = now_s ? now_s : std::function<double()>(monotonic_seconds);
  const double warm_start = now();
  const double warm_end = warm_start + p.warmup_ms * 1e-3;
  do {
    sample_ms();  // at least one warm-up launch: module load, lazy init, first-touch
  } while (now() < warm_end);

  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(std::min(p.max_samples, 4096)));
  std::vector<double> sorted;
  const double start = now();
  bool converged = false;
  std::size_t next_check = static_cast<std::size_t>(std::max(1, p.min_samples));
  while (true) {
    samples.push_back(sample_ms());
    const std::size_t n = samples.size();
    if (static_cast<int>(n) >= p.max_samples) break;
    if (n >= next_check) {
      sorted.assign(samples.begin(), samples.end());
      std::sort(sorted.begin(), sorted.end());
      if (median_noise_pct(sorted) <= p.noise_pct) {
        converged = true;
        break;
      }
      // Re-check every ~5% of the samples so the sort stays negligible for long runs.
      next_check = n + std::max<std::size_t>(1, n / 20);
    }
    if (n >= 3 && now() - start >= p.max_time_s) break;
  }
  if (span) {
    span->warmup_s = start - warm_start;
    span->sampling_s = now() - start;
  }
  TimingStats t = summarize_samples(samples);
  t.converged = converged;
  return t;
}

}  // namespace attn
