// Isolation on a real GPU through the attnscope executable: an illegal address (a sticky error)
// costs its case only and the next case runs ok in a fresh worker; a hung kernel is killed at the
// time-out; an impossible allocation is `oom`; a planted off-by-one is `mismatch`.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(IsolationGpu, IllegalAddressIsAFaultAndTheNextCaseRunsInAFreshWorker) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const fs::path out = fs::path(::testing::TempDir()) / "attnscope_gpu_isolation_fault";
  fs::remove_all(out);
  std::string output;
  const int code = run_attnscope_into(
      "run --backend cuda --debug-kernels --kernels cuda.reference,debug.fault --batch 1 --heads 2 --seq "
      "64,128 "
      "--head-dim 64 --dtype fp16 --max-time-s 0.05 --case-timeout 120 --out " +
          out.string(),
      output);
  std::printf("%s", output.c_str());
  EXPECT_EQ(code, 1) << output;  // two cases faulted
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 4u);
  ASSERT_TRUE(run.run.gpu.has_value());
  for (std::size_t i = 0; i < run.cases.size(); ++i) {
    const CaseResult& c = run.cases[i];
    SCOPED_TRACE(c.kernel + " " + c.problem.full_label());
    if (i % 2 == 0) {
      EXPECT_EQ(c.kernel, "cuda.reference");
      EXPECT_EQ(c.status, Status::ok) << c.reason;
      EXPECT_TRUE(c.timing.has_value());
    } else {
      EXPECT_EQ(c.kernel, "debug.fault");
      EXPECT_EQ(c.status, Status::fault);
      EXPECT_NE(c.reason.find("cudaErrorIllegalAddress"), std::string::npos) << c.reason;
    }
  }
  // The worker reported the fault itself, then left; case 3 ran in the second worker.
  const std::string log = read_text(out / "workers.log");
  EXPECT_EQ(count(log, "as pid"), 2u) << log;
  EXPECT_EQ(count(log, "the device context is lost"), 2u) << log;
  EXPECT_EQ(count(log, "exited with code 3"), 2u) << log;
}

TEST(IsolationGpu, HangIsKilledAtTheTimeoutOomAndWrongAreReported) {
  std::string why;
  if (!have_gpu(why)) GTEST_SKIP() << "no CUDA device: " << why;
  const fs::path out = fs::path(::testing::TempDir()) / "attnscope_gpu_isolation_hang";
  fs::remove_all(out);
  std::string output;
  const int code = run_attnscope_into(
      "run --backend cuda --debug-kernels --kernels cuda.reference,debug.hang,debug.oom,debug.wrong --batch "
      "2 "
      "--heads 2 --seq 96 --head-dim 64 --dtype bf16 --max-time-s 0.05 --case-timeout 15 --out " +
          out.string(),
      output);
  std::printf("%s", output.c_str());
  EXPECT_EQ(code, 1) << output;
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 4u);
  EXPECT_EQ(run.cases[0].status, Status::ok) << run.cases[0].reason;
  EXPECT_EQ(run.cases[1].kernel, "debug.hang");
  EXPECT_EQ(run.cases[1].status, Status::timeout) << run.cases[1].reason;
  EXPECT_GE(run.cases[1].wall_s, 15.0);
  EXPECT_EQ(run.cases[2].kernel, "debug.oom");
  EXPECT_EQ(run.cases[2].status, Status::oom) << run.cases[2].reason;
  EXPECT_EQ(run.cases[3].kernel, "debug.wrong");
  EXPECT_EQ(run.cases[3].status, Status::mismatch) << run.cases[3].reason;
  ASSERT_TRUE(run.cases[3].correctness.has_value());
  EXPECT_GT(run.cases[3].correctness->rel_l2, 0.05);
  EXPECT_EQ(count(read_text(out / "workers.log"), "as pid"), 2u);  // a fresh worker after the kill
}

}  // namespace
}  // namespace attn
