// Issue 24: `make test` (scripts/run-tests.sh) on a machine without a GPU summarises the GPU tests
// in one line with the reason, instead of one "Skipped" line per test; with a GPU it runs them.
// Driven on a fake build folder (a CTestTestfile and stand-ins for the binaries) so it needs no GPU.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli_process.hpp"
#include "tests/support/test_paths.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

void write_exe(const fs::path& p, const std::string& body) {
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(p, fs::perms::owner_all);
}

// A build folder (attnscope and tests/attnscope.tests.gpu, as CMake lays them out) with one CPU
// test and three GPU tests; `devices` is what `attnscope devices` prints.
fs::path fake_build(const std::string& name, const std::string& devices) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_exe(dir / "attnscope", "echo '" + devices + "'");
  fs::create_directories(dir / "tests");
  write_exe(dir / "tests" / "attnscope.tests.gpu", "exit 0");
  std::ofstream(dir / "CTestTestfile.cmake")
      << "add_test(cpu.One /bin/echo cpu-ran)\n"
         "add_test(gpu.A /bin/echo gpu-a-ran)\n"
         "add_test(gpu.B /bin/echo gpu-b-ran)\n"
         "add_test(gpu.C /bin/echo gpu-c-ran)\n"
         "set_tests_properties(gpu.A gpu.B gpu.C PROPERTIES LABELS gpu)\n";
  return dir;
}

CliOutcome run_script(const fs::path& build) {
  return run_shell(test::source_dir() + "/scripts/run-tests.sh " + build.string() + " 1 2>&1");
}

TEST(MakeTest, WithoutAGpuSummarisesGpuTestsInOneLine) {
  const CliOutcome o = run_script(fake_build("attnscope_make_test_nogpu", "no GPU: CUDA driver not found"));
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("cpu.One"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("gpu.A"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("gpu: 3 GPU tests skipped: no GPU: CUDA driver not found"), std::string::npos)
      << o.output;
}

TEST(MakeTest, WithoutGpuTestsBuiltSaysSo) {
  const fs::path dir = fake_build("attnscope_make_test_cpu_build", "no GPU: CUDA driver not found");
  fs::remove_all(dir / "tests");
  const CliOutcome o = run_script(dir);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("gpu: 3 GPU tests skipped: the GPU tests are not built"), std::string::npos)
      << o.output;
}

TEST(MakeTest, WithAGpuRunsGpuTests) {
  const CliOutcome o = run_script(fake_build("attnscope_make_test_gpu", "GPU 0: NVIDIA H100 80GB HBM3"));
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("gpu.A"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("GPU tests skipped"), std::string::npos) << o.output;
}

}  // namespace
}  // namespace attn
