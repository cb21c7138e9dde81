// CUPTI metrics, launch statistics, peaks and the roofline end to end through the attnscope
// executable on a real GPU: per-kernel rows and the aggregate for single- and multi-kernel cases,
// FLOP counters against the counted FLOPs, --metrics none / +extra / an unknown name.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "reports/jsonl_store.hpp"
#include "tests/support/cli_process.hpp"
#include "tests/support/gpu_probe.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

int run_attnscope_into(const std::string& args, std::string& output) {
  const CliOutcome o = run_cli(args);
  output += o.output;
  return o.exit_code;
}

LoadedRun sweep(const std::string& name, const std::string& args, std::string* output = nullptr) {
  const fs::path out = fs::path(::testing::TempDir()) / ("attnscope_metrics_" + name);
  fs::remove_all(out);
  std::string text;
  const int code = run_attnscope_into(
      "run --backend cuda --quiet --max-time-s 0.05 " + args + " --out " + out.string(), text);
  EXPECT_EQ(code, 0) << text;
  if (output) *output = text;
  return read_results(out / "results.jsonl");
}

const char* kShape = "--batch 2 --heads 8 --seq 1024 --head-dim 64 --dtype fp16 --causal 0";

TEST(MetricsGpu, DefaultSetPerKernelAndAggregate) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const LoadedRun run = sweep("default", std::string("--kernels cudnn.sdpa,cublas.unfused ") + kShape);
  EXPECT_EQ(run.run.metrics_status, MetricsStatus::ok) << run.run.metrics_reason;
  ASSERT_TRUE(run.run.metrics_passes.has_value());
  EXPECT_GE(*run.run.metrics_passes, 8);
  EXPECT_TRUE(run.run.peaks.tensor_tflops_fp16_measured.has_value());
  EXPECT_TRUE(run.run.peaks.dram_gbps_measured.has_value());
  // The L2 ceiling of the hierarchical roofline: L2 reads are faster than DRAM.
  ASSERT_TRUE(run.run.peaks.l2_gbps_measured.has_value());
  EXPECT_GT(*run.run.peaks.l2_gbps_measured, 1.5 * *run.run.peaks.dram_gbps_measured);
  ASSERT_EQ(run.cases.size(), 2u);
  for (const CaseResult& c : run.cases) {
    SCOPED_TRACE(c.kernel);
    ASSERT_EQ(c.status, Status::ok) << c.reason;
    ASSERT_EQ(c.metrics_status, MetricsStatus::ok) << c.metrics_reason;
    ASSERT_TRUE(c.metrics.has_value());
    ASSERT_FALSE(c.launch.empty());
    ASSERT_EQ(c.metrics->kernels.size(), c.launch.size());
    for (std::size_t i = 0; i < c.launch.size(); ++i) {
      const LaunchStats& l = c.launch[i];
      EXPECT_EQ(c.metrics->kernels[i].name, l.name);
      EXPECT_GT(l.grid[0] * l.grid[1] * l.grid[2], 0);
      EXPECT_GT(l.block[0] * l.block[1] * l.block[2], 0);
      EXPECT_GT(l.regs, 0);
      ASSERT_TRUE(l.occupancy_theoretical.has_value());
      EXPECT_GT(*l.occupancy_theoretical, 0.0);
      EXPECT_LE(*l.occupancy_theoretical, 100.0);
    }
    const KernelMetrics& a = c.metrics->aggregate;
    ASSERT_TRUE(a.gpu_time_ns && a.dram_bytes && a.tensor_flops && a.sm_throughput_pct && a.l2_bytes);
    // Every DRAM byte passes through L2.
    EXPECT_GE(*a.l2_bytes, 0.9 * *a.dram_bytes);
    EXPECT_GT(*a.gpu_time_ns, 0);
    EXPECT_GT(*a.sm_throughput_pct, 0);
    EXPECT_LE(*a.sm_throughput_pct, 100);
    // Q, K, V in and O out must cross DRAM at least once after the L2 flush (cold mode).
    EXPECT_GT(*a.dram_bytes, 0.5 * static_cast<double>(c.min_bytes));
    ASSERT_TRUE(c.roofline.has_value());
    EXPECT_EQ(c.roofline->peak_source, "measured");
    EXPECT_TRUE(c.roofline->achieved_intensity.has_value());
    EXPECT_NE(c.ncu_command.find("--nvtx-include 'attnscope@"), std::string::npos) << c.ncu_command;
    EXPECT_TRUE(c.clocks.has_value());
  }
  // cublas.unfused: two GEMMs and a softmax; its GEMMs do all of the problem's FLOPs (no mask),
  // so the tensor counters must equal the counted FLOPs.
  const CaseResult& unfused = run.cases[0].kernel == "cublas.unfused" ? run.cases[0] : run.cases[1];
  EXPECT_GE(unfused.metrics->kernels.size(), 3u);
  EXPECT_NEAR(*unfused.metrics->aggregate.tensor_flops / unfused.flops, 1.0, 0.01);
  double sum_ns = 0;
  for (const auto& k : unfused.metrics->kernels) sum_ns += *k.gpu_time_ns;
  EXPECT_DOUBLE_EQ(*unfused.metrics->aggregate.gpu_time_ns, sum_ns);
}

TEST(MetricsGpu, NoneExtraAndUnknownNames) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const LoadedRun off = sweep("none", std::string("--kernels cudnn.sdpa --metrics none ") + kShape);
  EXPECT_EQ(off.run.metrics_status, MetricsStatus::off);
  ASSERT_EQ(off.cases.size(), 1u);
  EXPECT_EQ(off.cases[0].status, Status::ok);
  EXPECT_EQ(off.cases[0].metrics_status, MetricsStatus::off);
  EXPECT_FALSE(off.cases[0].metrics.has_value());
  EXPECT_FALSE(off.cases[0].launch.empty());  // launch statistics do not need the metrics pass

  const LoadedRun extra =
      sweep("extra", std::string("--kernels cudnn.sdpa --metrics +lts__t_sectors.sum ") + kShape);
  ASSERT_EQ(extra.cases.size(), 1u);
  ASSERT_TRUE(extra.cases[0].metrics.has_value());
  ASSERT_TRUE(extra.cases[0].metrics->aggregate.extra.contains("lts__t_sectors.sum"));
  EXPECT_GT(extra.cases[0].metrics->aggregate.extra.at("lts__t_sectors.sum"), 0.0);
  // The default set's L2 traffic is 32 B per sector of the extra's count.
  ASSERT_TRUE(extra.cases[0].metrics->aggregate.l2_bytes.has_value());
  EXPECT_NEAR(*extra.cases[0].metrics->aggregate.l2_bytes /
                  (32 * extra.cases[0].metrics->aggregate.extra.at("lts__t_sectors.sum")),
              1.0, 0.01);
  EXPECT_TRUE(extra.cases[0].metrics->aggregate.dram_bytes.has_value());

  std::string text;
  const int code = run_attnscope_into(
      std::string("run --backend cuda --quiet --kernels cudnn.sdpa --metrics sm__no_such.sum ") + kShape +
          " --out " + (fs::path(::testing::TempDir()) / "attnscope_bad").string(),
      text);
  EXPECT_EQ(code, 2) << text;
  EXPECT_NE(text.find("'sm__no_such.sum' is not a metric of"), std::string::npos) << text;
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// Issue 22 item 3: case replay (the case runs again once per pass) and CUPTI's kernel replay count
// the same work; the record says which ran. The GPU case also names its device and its phases.
TEST(MetricsGpu, CaseReplayCountsWhatKernelReplayCounts) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string kernels = std::string("--kernels cublas.unfused,fa2.mma ") + kShape;
  const LoadedRun by_case = sweep("replay_case", kernels + " --metrics-replay case");
  const LoadedRun by_kernel = sweep("replay_kernel", kernels + " --metrics-replay kernel");
  EXPECT_EQ(by_case.run.protocol.metrics_replay, MetricsReplay::whole_case);
  ASSERT_EQ(by_case.cases.size(), 2u);
  ASSERT_EQ(by_kernel.cases.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const CaseResult &c = by_case.cases[i], &k = by_kernel.cases[i];
    SCOPED_TRACE(c.kernel);
    ASSERT_EQ(c.metrics_status, MetricsStatus::ok) << c.metrics_reason;
    ASSERT_EQ(k.metrics_status, MetricsStatus::ok) << k.metrics_reason;
    EXPECT_EQ(c.metrics->replay, "case");
    EXPECT_EQ(k.metrics->replay, "kernel");
    ASSERT_EQ(c.metrics->kernels.size(), k.metrics->kernels.size());
    // Tensor FLOPs are a count of the work: identical whatever the replay.
    EXPECT_DOUBLE_EQ(*c.metrics->aggregate.tensor_flops, *k.metrics->aggregate.tensor_flops);
    EXPECT_NEAR(*c.metrics->aggregate.gpu_time_ns / *k.metrics->aggregate.gpu_time_ns, 1.0, 0.25);
    // DRAM reads differ by what each replay leaves in L2 (0.886 for cublas.unfused on an H200,
    // 2026-11-26): not a count of the work, so only bounded.
    EXPECT_NEAR(*c.metrics->aggregate.dram_bytes_read / *k.metrics->aggregate.dram_bytes_read, 1.0, 0.2);

    ASSERT_TRUE(c.place);
    EXPECT_EQ(c.place->device_uuid.rfind("GPU-", 0), 0u) << c.place->device_uuid;
    EXPECT_EQ(c.place->device_name, by_case.run.gpu->name);
    ASSERT_TRUE(c.phases && c.phases->metrics_s && c.phases->timed_s && c.phases->check_s);
    EXPECT_NEAR(phases_sum(*c.phases), c.wall_s, 0.05 * c.wall_s);
    EXPECT_GE(*c.phases->metrics_s, c.metrics->wall_s);
  }
  ASSERT_EQ(by_case.run.devices.size(), 1u);
  EXPECT_EQ(by_case.run.devices[0].uuid, by_case.cases[0].place->device_uuid);
}

// Issue 25: the range profiler stays enabled from case to case (one session, its counter image
// keeping every case's ranges) and starts a new session when the replay changes. Each case must
// still read its own ranges: with the shapes differing, a case reading another's would count
// another amount of work.
TEST(MetricsGpu, OneSessionManyCasesEachCountsItsOwnWork) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  // cublas.unfused at 9 x 8192^2 writes more than 1 GiB of scores, so `auto` replays that case
  // whole; the shorter ones get kernel replay: the session changes twice.
  const LoadedRun run = sweep("session",
                              "--kernels cublas.unfused,fa2.mma --batch 1 --heads 9 --seq 512,8192,1024 "
                              "--head-dim 64 --dtype fp16 --causal 0");
  ASSERT_EQ(run.cases.size(), 6u);
  int whole_case = 0;
  for (const CaseResult& c : run.cases) {
    SCOPED_TRACE(c.kernel + " " + std::to_string(c.problem.seq_q));
    ASSERT_EQ(c.status, Status::ok) << c.reason;
    ASSERT_EQ(c.metrics_status, MetricsStatus::ok) << c.metrics_reason;
    ASSERT_EQ(c.metrics->kernels.size(), c.launch.size());
    whole_case += c.metrics->replay == "case";
    // Without a mask fa2.mma does exactly the counted FLOPs on the tensor cores; cuBLAS's tiles
    // over 9 heads do up to 8% more (1.078 at S 512 and 1024, 1.016 at 8192 on an H200,
    // 2026-11-27). Another case's ranges would be off by 4x or more: the shapes are that far apart.
    EXPECT_NEAR(*c.metrics->aggregate.tensor_flops / c.flops, 1.0, c.kernel == "fa2.mma" ? 0.01 : 0.1);
  }
  EXPECT_EQ(whole_case, 1);
}

}  // namespace
}  // namespace attn
