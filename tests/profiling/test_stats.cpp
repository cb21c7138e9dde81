// Timing statistics and the sampler's stopping rule, with an injected clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "profiling/engine/sampler.hpp"
#include "profiling/engine/stats.hpp"

namespace attn {
namespace {

TEST(Stats, OrderStatisticsOfKnownSamples) {
  const std::vector<double> x{5, 1, 4, 2, 3};
  const TimingStats t = summarize_samples(x);
  EXPECT_EQ(t.samples, 5);
  EXPECT_DOUBLE_EQ(t.median_ms, 3);
  EXPECT_DOUBLE_EQ(t.min_ms, 1);
  EXPECT_DOUBLE_EQ(t.max_ms, 5);
  EXPECT_DOUBLE_EQ(t.q1_ms, 2);
  EXPECT_DOUBLE_EQ(t.q3_ms, 4);
  EXPECT_DOUBLE_EQ(t.mean_ms, 3);
  EXPECT_DOUBLE_EQ(t.std_ms, std::sqrt(2.5));
}

TEST(Stats, QuantileInterpolatesLikeNumpy) {
  const std::vector<double> s{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(quantile_sorted(s, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile_sorted(s, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile_sorted(s, 1.0), 4);
}

TEST(Stats, NoiseIsRobustToOneOutlier) {
  std::vector<double> s(100, 1.0);
  for (std::size_t i = 0; i < s.size(); ++i) s[i] += 0.001 * static_cast<double>(i % 10);
  std::sort(s.begin(), s.end());
  const double clean = median_noise_pct(s);
  s.back() = 50.0;  // one preempted sample (the largest stays the largest: still sorted)
  EXPECT_NEAR(median_noise_pct(s), clean, 0.01);
  EXPECT_LT(median_noise_pct(s), 0.2);
}

TEST(Stats, ConstantSamplesHaveZeroNoise) {
  const std::vector<double> s(20, 2.0);
  EXPECT_DOUBLE_EQ(median_noise_pct(s), 0.0);
}

// A fake clock that advances by the sample's own duration, so the loop's time budget is exact.
struct FakeDevice {
  double now = 0;
  int calls = 0;
  std::vector<double> pattern;
  double sample() {
    const double ms = pattern[static_cast<std::size_t>(calls++) % pattern.size()];
    now += ms * 1e-3;
    return ms;
  }
};

TEST(Sampler, StopsAtMinSamplesWhenQuiet) {
  FakeDevice dev{0, 0, {1.0}};
  Protocol p;
  p.warmup_ms = 5;  // 5 warm-up launches of 1 ms
  p.min_samples = 10;
  p.noise_pct = 1.0;
  const TimingStats t = measure_samples(
      p, [&] { return dev.sample(); }, [&] { return dev.now; });
  EXPECT_TRUE(t.converged);
  EXPECT_EQ(t.samples, 10);
  EXPECT_EQ(dev.calls, 15);
  EXPECT_DOUBLE_EQ(t.median_ms, 1.0);
}

TEST(Sampler, NoisySamplesRunUntilTheBudget) {
  FakeDevice dev{0, 0, {1.0, 3.0, 0.5, 2.0, 5.0}};
  Protocol p;
  p.warmup_ms = 0;
  p.min_samples = 5;
  p.noise_pct = 0.01;
  p.max_time_s = 0.5;
  const TimingStats t = measure_samples(
      p, [&] { return dev.sample(); }, [&] { return dev.now; });
  EXPECT_FALSE(t.converged);
  // 0.5 s of samples averaging 2.3 ms: about 217 samples, bounded by the budget.
  EXPECT_GT(t.samples, 200);
  EXPECT_LT(t.samples, 235);
}

TEST(Sampler, BudgetBeatsMinSamplesButKeepsThree) {
  FakeDevice dev{0, 0, {400.0, 410.0}};  // slow CPU case: 0.4 s a sample
  Protocol p;
  p.warmup_ms = 0;
  p.min_samples = 10;
  p.noise_pct = 0.001;
  p.max_time_s = 0.1;
  const TimingStats t = measure_samples(
      p, [&] { return dev.sample(); }, [&] { return dev.now; });
  EXPECT_EQ(t.samples, 3);
  EXPECT_FALSE(t.converged);
}

TEST(Sampler, MaxSamplesCaps) {
  FakeDevice dev{0, 0, {1.0, 1.5}};
  Protocol p;
  p.warmup_ms = 0;
  p.min_samples = 1;
  p.max_samples = 25;
  p.noise_pct = 1e-9;
  p.max_time_s = 100;
  EXPECT_EQ(measure_samples(
                p, [&] { return dev.sample(); }, [&] { return dev.now; })
                .samples,
            25);
}

}  // namespace
}  // namespace attn
