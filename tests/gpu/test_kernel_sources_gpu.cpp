// Issue 18 on a real GPU: the CUDA example plug-in and the same kernel compiled from
// examples/kernel-source/tiled_attention.cu with NVRTC run in one sweep beside cudnn.sdpa, pass the
// check (fp16 and bf16, causal and not, GQA), and carry CUPTI metrics; a plug-in that writes out of
// bounds is `fault` and the sweep completes. Paths can be overridden where the build tree was copied
// (ATTNSCOPE_BIN, ATTNSCOPE_CUDA_EXAMPLE_PLUGIN, ATTNSCOPE_TEST_PLUGIN_DIR).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "reports/jsonl_store.hpp"
#include "tests/support/cli_process.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/test_paths.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string cuda_plugin() { return env_or("ATTNSCOPE_CUDA_EXAMPLE_PLUGIN", test::cuda_example_plugin()); }
std::string oob_plugin() {
  const char* dir = std::getenv("ATTNSCOPE_TEST_PLUGIN_DIR");
  return dir ? std::string(dir) + "/libattnscope_test_plugin_oob.so" : test::test_plugin("oob");
}
std::string example_source() { return test::source_dir() + "/examples/kernel-source/tiled_attention.cu"; }

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnscope_gpu_sources_" + name);
  fs::remove_all(d);
  return d;
}

TEST(KernelSourcesGpu, PluginAndKernelSourcePassTheCheckBesideCudnnWithMetrics) {
  ATTN_SKIP_WITHOUT_GPU();
  ASSERT_TRUE(fs::exists(cuda_plugin())) << cuda_plugin();
  const fs::path out = fresh_dir("pair");
  const CliOutcome o =
      run_cli("run --backend cuda --plugin " + cuda_plugin() + " --kernel-source " + example_source() +
                  " --kernels example.tiled_mma,example.tiled_rtc,cudnn.sdpa --batch 2 --heads 8 --heads-kv "
                  "8,2 --seq 200,1024 "
                  "--head-dim 64,128 --dtype fp16,bf16 --causal 0,1 --max-time-s 0.05 "
                  "--quiet --out " +
                  out.string(),
              "ATTNSCOPE_CACHE_DIR=" + (out / "cache").string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  std::map<std::string, int> ok;
  for (const CaseResult& c : run.cases) {
    if (c.kernel == "cudnn.sdpa" && c.status != Status::ok) continue;  // cuDNN may refuse a shape
    ASSERT_EQ(c.status, Status::ok) << c.case_id << " " << c.reason;
    ASSERT_TRUE(c.correctness) << c.case_id;
    EXPECT_TRUE(c.correctness->pass) << c.case_id << " rel_l2 " << c.correctness->rel_l2;
    ++ok[c.kernel];
    if (c.kernel == "example.tiled_rtc") {
      EXPECT_LT(c.correctness->rel_l2, 5e-3) << c.case_id;
      ASSERT_TRUE(c.metrics) << c.case_id;
      EXPECT_GT(c.metrics->aggregate.tensor_pipe_pct.value_or(0), 0.0) << c.case_id;
      EXPECT_NE(c.ncu_command.find("--nvtx"), std::string::npos) << c.ncu_command;
    }
  }
  EXPECT_EQ(ok["example.tiled_mma"], 32);  // 2 GQA x 2 seq x 2 D x 2 dtype x 2 masks
  EXPECT_EQ(ok["example.tiled_rtc"], 32);
  ASSERT_EQ(run.run.plugins.size(), 2u);
  EXPECT_EQ(run.run.plugins[1].kind, "source");
  ASSERT_FALSE(run.run.plugins[1].compile.empty());
  EXPECT_EQ(run.run.plugins[1].compile[0].rfind("NVRTC ", 0), 0u) << run.run.plugins[1].compile[0];
}

TEST(KernelSourcesGpu, AnOutOfBoundsPluginIsAFaultAndTheSweepCompletes) {
  ATTN_SKIP_WITHOUT_GPU();
  ASSERT_TRUE(fs::exists(oob_plugin())) << oob_plugin();
  const fs::path out = fresh_dir("oob");
  const CliOutcome o =
      run_cli("run --backend cuda --plugin " + oob_plugin() + " --kernel-source " + example_source() +
                  " --kernels bad.oob,example.tiled_rtc --batch 1 --heads 2 --seq 128,256 "
                  "--head-dim 64 --max-time-s 0.02 --metrics none --case-timeout 120 --quiet --out " +
                  out.string(),
              "ATTNSCOPE_CACHE_DIR=" + (out / "cache").string());
  EXPECT_NE(o.exit_code, 2) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 4u);
  for (const CaseResult& c : run.cases) {
    if (c.kernel == "bad.oob")
      EXPECT_EQ(c.status, Status::fault) << c.case_id << " " << c.reason;
    else
      EXPECT_EQ(c.status, Status::ok) << c.case_id << " " << c.reason;
  }
}

}  // namespace
}  // namespace attn
