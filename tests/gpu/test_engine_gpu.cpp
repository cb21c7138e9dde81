// End-to-end CUDA sweeps through the attnscope executable: every CUDA kernel checked on shapes
// with ragged tails, GQA/MQA, Sq != Sk both ways, causal and windowed masks; the large-case
// reference path (cuda.reference + sampled cpu.reference rows); graphs and warm L2.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
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

LoadedRun sweep(const std::string& name, const std::string& args) {
  const fs::path out = fs::path(::testing::TempDir()) / ("attnscope_gpu_" + name);
  fs::remove_all(out);
  std::string output;
  const int code = run_attnscope_into(
      "run --backend cuda --quiet --metrics none --max-time-s 0.05 " + args + " --out " + out.string(),
      output);
  EXPECT_EQ(code, 0) << output;
  std::printf("%s", output.c_str());
  return read_results(out / "results.jsonl");
}

void expect_all_ok(const LoadedRun& run, std::size_t expected_cases) {
  EXPECT_EQ(run.cases.size(), expected_cases);
  for (const CaseResult& c : run.cases) {
    SCOPED_TRACE(c.kernel + " " + c.problem.full_label());
    if (c.status == Status::skipped) {
      // Only cuDNN may refuse here, and it must say why.
      EXPECT_EQ(c.kernel, "cudnn.sdpa");
      EXPECT_FALSE(c.reason.empty());
      continue;
    }
    ASSERT_EQ(c.status, Status::ok) << c.reason;
    ASSERT_TRUE(c.correctness.has_value());
    EXPECT_TRUE(c.correctness->pass);
    EXPECT_EQ(c.correctness->nonfinite, 0);
    EXPECT_LE(c.correctness->rel_l2, c.correctness->tol);
    ASSERT_TRUE(c.timing.has_value());
    EXPECT_GT(c.timing->median_ms, 0.0);
    EXPECT_TRUE(c.device_bytes_peak.has_value());
  }
}

const char* kAllCudaKernels = "--kernels cuda.reference,naive.unfused,cublas.unfused,cudnn.sdpa";

TEST(EngineGpu, EveryKernelPassesOnRaggedShapesAndMasks) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  // 2 seqs x 2 causal x 2 dtypes x 2 head dims x 4 kernels.
  expect_all_ok(
      sweep("ragged",
            std::string(kAllCudaKernels) +
                " --batch 3 --heads 4 --seq 17,1000 --head-dim 64,128 --dtype fp16,bf16 --causal 0,1"),
      64);
}

TEST(EngineGpu, GqaMqaAndUnequalLengthsBothWays) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  expect_all_ok(
      sweep("gqa", std::string(kAllCudaKernels) +
                       " --batch 1 --heads 32 --heads-kv 4,1 --seq-q 100,300 --seq-kv 300,100 --head-dim 64 "
                       "--causal 0,1"),
      2 * 2 * 2 * 2 * 4);
}

TEST(EngineGpu, SlidingWindows) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  expect_all_ok(sweep("window", std::string(kAllCudaKernels) +
                                    " --batch 2 --heads 4 --seq 4097 --head-dim 64 --window '64,0;128,128'"),
                2 * 4);
}

// A varlen batch run packed by fa2.mma and cudnn.sdpa and dense-bucketed by fa2.mma, cudnn.sdpa and
// cublas.unfused (which takes no varlen of its own): every case checked against the same reference,
// the bucketed ones recording their padding waste, TFLOPS on the same real pairs.
TEST(EngineGpu, VarlenPackedAndDenseBucketed) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const LoadedRun run =
      sweep("bucketed",
            "--kernels fa2.mma,cudnn.sdpa,fa2.mma@bucket=128,cudnn.sdpa@bucket=128,cublas.unfused@bucket=256 "
            "--batch 12 --heads 8 --heads-kv 2 --seq 2048 --head-dim 64,128 --causal 1 "
            "--varlen 'lognormal:600:0.8@3'");
  expect_all_ok(run, 2 * 5);
  std::map<std::string, double> flops;
  for (const CaseResult& c : run.cases) {
    SCOPED_TRACE(c.kernel + " " + c.variant);
    ASSERT_TRUE(c.problem.varlen.active());
    const bool bucketed = c.knobs.count("bucket") != 0;
    EXPECT_EQ(c.padding_waste.has_value(), bucketed);
    if (bucketed) {
      EXPECT_GT(*c.padding_waste, 0.0);
    }
    const std::string shape = std::to_string(c.problem.head_dim);
    if (!flops.count(shape)) flops[shape] = c.flops;
    EXPECT_EQ(c.flops, flops[shape]);
  }
}

TEST(EngineGpu, LargeCaseUsesCudaReferenceAndSampledRows) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const LoadedRun run = sweep("large",
                              "--kernels cudnn.sdpa,cublas.unfused --batch 1 --heads 8 --seq 4096 "
                              "--head-dim 128 --causal 1");
  expect_all_ok(run, 2);
  for (const CaseResult& c : run.cases) {
    ASSERT_TRUE(c.correctness.has_value());
    EXPECT_NE(c.correctness->reference.find("cuda.reference"), std::string::npos);
    ASSERT_TRUE(c.correctness->sampled_rows.has_value());
    EXPECT_EQ(*c.correctness->sampled_rows, 48);
    EXPECT_LE(*c.correctness->sampled_rows_rel_l2, c.correctness->tol);
  }
}

TEST(EngineGpu, GraphsAndWarmL2ProduceConsistentTimings) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const LoadedRun plain = sweep("plain", "--kernels cudnn.sdpa --batch 1 --heads 1 --seq 128 --head-dim 64");
  const LoadedRun graph =
      sweep("graph", "--kernels cudnn.sdpa --batch 1 --heads 1 --seq 128 --head-dim 64 --graphs --l2 warm");
  ASSERT_EQ(plain.cases.size(), 1u);
  ASSERT_EQ(graph.cases.size(), 1u);
  ASSERT_TRUE(graph.cases[0].timing && plain.cases[0].timing);
  EXPECT_GT(graph.cases[0].timing->launches_per_sample, 1);
  EXPECT_EQ(graph.run.protocol.l2, L2Mode::warm);
  // Batched in a graph, a tiny kernel cannot look slower than launched one at a time behind an L2 flush.
  EXPECT_LT(graph.cases[0].timing->median_ms, plain.cases[0].timing->median_ms * 1.2);
}

// --cooldown-ms: the GPU idles that long before each case's warm-up, in a phase of its own that the
// run record's protocol and totals carry.
TEST(EngineGpu, CooldownIsItsOwnPhaseOfEveryCase) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const LoadedRun run = sweep("cooldown",
                              "--kernels naive.unfused --batch 1 --heads 2 --seq 64,128 --head-dim 64 "
                              "--cooldown-ms 150");
  ASSERT_EQ(run.cases.size(), 2u);
  EXPECT_EQ(run.run.protocol.cooldown_ms, 150.0);
  for (const CaseResult& c : run.cases) {
    ASSERT_EQ(c.status, Status::ok) << c.reason;
    ASSERT_TRUE(c.phases.has_value());
    ASSERT_TRUE(c.phases->cooldown_s.has_value());
    EXPECT_GE(*c.phases->cooldown_s, 0.15);
    EXPECT_LT(*c.phases->cooldown_s, 1.0);
    EXPECT_GE(c.wall_s, *c.phases->cooldown_s);
  }
  ASSERT_TRUE(run.run.totals.has_value());
  ASSERT_TRUE(run.run.totals->phases.cooldown_s.has_value());
  EXPECT_GE(*run.run.totals->phases.cooldown_s, 0.30);
  // Without the flag there is no such phase.
  const LoadedRun plain =
      sweep("no_cooldown", "--kernels naive.unfused --batch 1 --heads 2 --seq 64 --head-dim 64");
  ASSERT_EQ(plain.cases.size(), 1u);
  ASSERT_TRUE(plain.cases[0].phases.has_value());
  EXPECT_FALSE(plain.cases[0].phases->cooldown_s.has_value());
}

TEST(EngineGpu, CaseThatDoesNotFitIsOomAndTheSweepGoesOn) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  // naive.unfused materialises S: 16 x 65536^2 fp32 = 256 GiB of workspace; cudnn.sdpa needs none.
  const LoadedRun run = sweep("oom",
                              "--kernels naive.unfused,cudnn.sdpa --batch 1 --heads 16 --seq 65536 "
                              "--head-dim 16");
  ASSERT_EQ(run.cases.size(), 2u);
  EXPECT_EQ(run.cases[0].kernel, "naive.unfused");
  EXPECT_EQ(run.cases[0].status, Status::oom) << run.cases[0].reason;
  EXPECT_NE(run.cases[0].reason.find("cudaMalloc"), std::string::npos) << run.cases[0].reason;
  EXPECT_EQ(run.cases[1].status, Status::ok) << run.cases[1].reason;
}

}  // namespace
}  // namespace attn
