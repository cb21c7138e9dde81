// The per-GPU peaks cache: key, location, round trip, other GPUs kept, corrupt files ignored.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "profiling/peaks.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

MeasuredPeaks sample(double tflops) {
  MeasuredPeaks m;
  m.tensor_tflops_fp16 = tflops;
  m.tensor_tflops_bf16 = tflops + 10;
  m.dram_gbps = 3000.5;
  m.l2_gbps = 9800.25;
  m.measured_at = "2025-01-02T03:04:05Z";
  m.method = "test";
  return m;
}

TEST(PeaksCache, KeyAndPath) {
  GpuInfo g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.pci_bus_id = "00000000:19:00.0";
  EXPECT_EQ(peaks_cache_key(g, "580.65.06"), "NVIDIA H100 80GB HBM3|00000000:19:00.0|580.65.06");
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(peaks_cache_path(), fs::path("/tmp/xdg-test/attnscope/peaks.json"));
  if (old)
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
}

TEST(PeaksCache, RoundTripKeepsOtherGpus) {
  const fs::path dir = fs::path(::testing::TempDir()) / "attnscope_peaks_cache";
  fs::remove_all(dir);
  const fs::path file = dir / "attnscope" / "peaks.json";
  EXPECT_FALSE(read_cached_peaks(file, "a"));
  write_cached_peaks(file, "a", sample(700));
  write_cached_peaks(file, "b", sample(300));
  write_cached_peaks(file, "a", sample(710));  // replaces a
  const auto a = read_cached_peaks(file, "a");
  const auto b = read_cached_peaks(file, "b");
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(a->tensor_tflops_fp16, 710);
  EXPECT_DOUBLE_EQ(a->tensor_tflops_bf16, 720);
  EXPECT_DOUBLE_EQ(a->dram_gbps, 3000.5);
  EXPECT_DOUBLE_EQ(a->l2_gbps, 9800.25);
  EXPECT_EQ(a->measured_at, "2025-01-02T03:04:05Z");
  EXPECT_DOUBLE_EQ(b->tensor_tflops_fp16, 300);
  EXPECT_FALSE(read_cached_peaks(file, "c"));

  Peaks p;
  apply_measured_peaks(p, *a);
  EXPECT_DOUBLE_EQ(*p.tensor_tflops_measured, 720);  // the larger of fp16 and bf16
  EXPECT_DOUBLE_EQ(*p.tensor_tflops_fp16_measured, 710);
  EXPECT_DOUBLE_EQ(*p.dram_gbps_measured, 3000.5);
  EXPECT_EQ(p.measured_at, "2025-01-02T03:04:05Z");

  std::ofstream(file) << "{ not json";
  EXPECT_FALSE(read_cached_peaks(file, "a"));  // a corrupt cache is measured again, not trusted
  write_cached_peaks(file, "a", sample(5));
  EXPECT_DOUBLE_EQ(read_cached_peaks(file, "a")->tensor_tflops_fp16, 5);
}

}  // namespace
// An entry written before the L2 probe existed is measured again (it lacks the L2 ceiling).
TEST(PeaksCache, AnEntryWithoutTheL2CeilingIsMeasuredAgain) {
  const fs::path dir = fs::path(::testing::TempDir()) / "attnscope_peaks_cache_old";
  fs::remove_all(dir);
  const fs::path file = dir / "peaks.json";
  MeasuredPeaks old = sample(700);
  old.l2_gbps = 0;
  write_cached_peaks(file, "a", old);
  EXPECT_FALSE(read_cached_peaks(file, "a"));
  Peaks run;
  apply_measured_peaks(run, sample(700));
  EXPECT_EQ(run.l2_gbps_measured, 9800.25);
}

}  // namespace attn
