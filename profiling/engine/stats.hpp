// Summary statistics of timing samples, and the stopping rule's noise estimate.
#pragma once
#include <span>

#include "profiling/result.hpp"

namespace attn {

// Quantile with linear interpolation between order statistics (R type 7, numpy's default).
double quantile_sorted(std::span<const double> sorted, double q);

// Relative standard error of the median [%]. The median's standard error is about
// 1.2533 * sigma / sqrt(n) for near-normal samples; sigma is estimated robustly as IQR / 1.349
// so one preempted sample does not stall convergence (falls back to the sample std for n < 8).
double median_noise_pct(std::span<const double> sorted);

// median, min, max, mean, std (n-1), quartiles, noise. `samples_ms` need not be sorted.
TimingStats summarize_samples(std::span<const double> samples_ms);

}  // namespace attn
