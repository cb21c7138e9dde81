// Order statistics and the robust noise estimate used to stop sampling.
#include "profiling/engine/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace attn {

double quantile_sorted(std::span<const double> s, double q) {
  if (s.empty()) return 0.0;
  const double pos = q * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, s.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return s[lo] + (s[hi] - s[lo]) * frac;
}

namespace {
double sample_std(std::span<const double> x, double mean) {
  if (x.size() < 2) return 0.0;
  double ss = 0.0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}
}  // namespace

double median_noise_pct(std::span<const double> s) {
  const std::size_t n = s.size();
  if (n < 2) return 100.0;
  const double median = quantile_sorted(s, 0.5);
  if (median <= 0.0) return 100.0;
  double sigma;
  if (n >= 8) {
    sigma = (quantile_sorted(s, 0.75) - quantile_sorted(s, 0.25)) / 1.349;
  } else {
    const double mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(n);
    sigma = sample_std(s, mean);
  }
  return 100.0 * 1.2533 * sigma / std::sqrt(static_cast<double>(n)) / median;
}

TimingStats summarize_samples(std::span<const double> samples_ms) {
  TimingStats t;
  if (samples_ms.empty()) return t;
  std::vector<double> s(samples_ms.begin(), samples_ms.end());
  std::sort(s.begin(), s.end());
  t.samples = static_cast<int>(s.size());
  t.min_ms = s.front();
  t.max_ms = s.back();
  t.median_ms = quantile_sorted(s, 0.5);
  t.q1_ms = quantile_sorted(s, 0.25);
  t.q3_ms = quantile_sorted(s, 0.75);
  t.mean_ms = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  t.std_ms = sample_std(s, t.mean_ms);
  t.noise_pct = median_noise_pct(s);
  return t;
}

}  // namespace attn
