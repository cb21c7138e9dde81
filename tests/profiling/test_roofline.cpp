// Roofline arithmetic: intensities, the ridge, attainable TFLOPS on both sides of it, the choice
// of measured vs datasheet ceilings, and theoretical occupancy of launches.
#include <gtest/gtest.h>

#include "profiling/launch_stats.hpp"
#include "profiling/roofline.hpp"

namespace attn {
namespace {

Peaks h100_peaks() {
  Peaks p;
  p.tensor_tflops_datasheet = 989.4;
  p.dram_gbps_datasheet = 3352;
  return p;
}

TEST(Roofline, CeilingsPreferMeasuredPerDtype) {
  Peaks p = h100_peaks();
  auto c = ceilings_for(p, DType::fp16);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->source, "datasheet");
  EXPECT_DOUBLE_EQ(c->tflops, 989.4);
  p.tensor_tflops_fp16_measured = 700;
  p.tensor_tflops_bf16_measured = 720;
  p.tensor_tflops_measured = 720;
  EXPECT_EQ(ceilings_for(p, DType::fp16)->source, "datasheet");  // DRAM not measured: no mixed pair
  p.dram_gbps_measured = 3000;
  c = ceilings_for(p, DType::fp16);
  EXPECT_EQ(c->source, "measured");
  EXPECT_DOUBLE_EQ(c->tflops, 700);
  EXPECT_DOUBLE_EQ(ceilings_for(p, DType::bf16)->tflops, 720);
  EXPECT_DOUBLE_EQ(c->gbps, 3000);
  EXPECT_FALSE(ceilings_for(p, DType::fp32));
  EXPECT_FALSE(ceilings_for(Peaks{}, DType::fp16));
}

TEST(Roofline, MemoryBoundBelowTheRidge) {
  const Ceilings c{1000, 4000, "measured"};  // ridge at 250 FLOP/B
  // 1e9 FLOPs over 1e8 bytes = 10 FLOP/B: attainable = 10 * 4000 GB/s = 40 TFLOP/s.
  const Roofline r = roofline_point(1e9, 100'000'000, std::nullopt, 20.0, c);
  EXPECT_DOUBLE_EQ(r.algorithmic_intensity, 10);
  EXPECT_FALSE(r.achieved_intensity);
  EXPECT_DOUBLE_EQ(r.ridge_intensity, 250);
  EXPECT_DOUBLE_EQ(r.attainable_tflops, 40);
  EXPECT_DOUBLE_EQ(*r.pct_of_roofline, 50);
  EXPECT_EQ(r.bound, "memory");
  EXPECT_EQ(r.peak_source, "measured");
}

TEST(Roofline, AchievedIntensityPlacesThePointWhenDramBytesAreMeasured) {
  const Ceilings c{1000, 4000, "datasheet"};
  // Algorithmic 1000 FLOP/B (compute bound), but the kernel moved 10x the minimum: 100 FLOP/B.
  const Roofline r = roofline_point(1e12, 1'000'000'000, 1e10, 300.0, c);
  EXPECT_DOUBLE_EQ(r.algorithmic_intensity, 1000);
  EXPECT_DOUBLE_EQ(*r.achieved_intensity, 100);
  EXPECT_DOUBLE_EQ(r.attainable_tflops, 400);
  EXPECT_EQ(r.bound, "memory");
  EXPECT_DOUBLE_EQ(*r.pct_of_roofline, 75);
  const Roofline compute = roofline_point(1e12, 1'000'000'000, 1e9, 500.0, c);
  EXPECT_DOUBLE_EQ(compute.attainable_tflops, 1000);
  EXPECT_EQ(compute.bound, "compute");
  EXPECT_DOUBLE_EQ(*compute.pct_of_roofline, 50);
  EXPECT_FALSE(roofline_point(1e12, 1'000'000'000, std::nullopt, std::nullopt, c).pct_of_roofline);
}

TEST(Roofline, ForACaseRecord) {
  CaseResult r;
  r.problem.dtype = DType::fp16;
  EXPECT_FALSE(roofline_for(r, h100_peaks()));  // no flops yet
  r.flops = 4.4e12;
  r.min_bytes = 2'000'000'000;
  r.tflops = 440;
  CaseMetrics m;
  m.aggregate.dram_bytes = 4e9;
  r.metrics = m;
  const auto rf = roofline_for(r, h100_peaks());
  ASSERT_TRUE(rf);
  EXPECT_DOUBLE_EQ(rf->algorithmic_intensity, 2200);
  EXPECT_DOUBLE_EQ(*rf->achieved_intensity, 1100);
  EXPECT_DOUBLE_EQ(rf->attainable_tflops, 989.4);
  EXPECT_NEAR(*rf->pct_of_roofline, 440 / 989.4 * 100, 1e-9);
}

TEST(Occupancy, LimitedByWarpsRegistersAndSharedMemory) {
  const SmLimits h100;  // defaults are the H100's
  EXPECT_DOUBLE_EQ(theoretical_occupancy_pct(h100, 128, 32, 0, std::nullopt), 100.0);
  // 128 registers: 4096 per warp, 4 warps per sub-partition = 16 warps = 2 blocks of 8 warps.
  EXPECT_DOUBLE_EQ(theoretical_occupancy_pct(h100, 256, 128, 0, std::nullopt), 25.0);
  // 168 registers round up to 5376 per warp: 3 warps per sub-partition = 12 warps = 3 blocks of 4.
  EXPECT_DOUBLE_EQ(theoretical_occupancy_pct(h100, 128, 168, 0, std::nullopt), 18.75);
  // 100 KiB of shared memory (+1 KiB reserved) per block: 2 blocks of 4 warps in 228 KiB.
  EXPECT_DOUBLE_EQ(theoretical_occupancy_pct(h100, 128, 32, 102400, std::nullopt), 12.5);
  // The carve-out the launch ran with bounds it further: 1 block in a 132 KiB carve-out.
  EXPECT_DOUBLE_EQ(theoretical_occupancy_pct(h100, 128, 32, 102400, 135168), 6.25);
  // Block-count limit: 32 blocks of one warp = half the warp slots.
  EXPECT_DOUBLE_EQ(theoretical_occupancy_pct(h100, 32, 16, 0, std::nullopt), 50.0);
  EXPECT_DOUBLE_EQ(theoretical_occupancy_pct(h100, 0, 32, 0, std::nullopt), 0.0);
}

}  // namespace
}  // namespace attn
