// End-to-end runs of the attnscope executable on the CPU backend: exit codes, files, messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "reports/jsonl_store.hpp"
#include "tests/support/cli_process.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnscope_" + name);
  fs::remove_all(d);
  return d;
}

TEST(RunCli, IssueCommandRunsEightCpuCasesAllOk) {
  const fs::path out = fresh_dir("issue_command");
  const CliOutcome o = run_cli(
      "run --backend cpu --kernels cpu.reference,cpu.flash --batch 1 --heads 2 --seq 64,128 --head-dim 32,64 "
      "--dtype fp32 --max-time-s 0.05 --out " +
      out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  EXPECT_EQ(run.run.backend, "cpu");
  EXPECT_EQ(run.run.protocol.seed, 42u);
  ASSERT_EQ(run.cases.size(), 8u);
  for (const CaseResult& c : run.cases) {
    EXPECT_EQ(c.status, Status::ok) << c.kernel << " " << c.reason;
    ASSERT_TRUE(c.timing.has_value());
    EXPECT_GT(c.timing->median_ms, 0.0);
    EXPECT_GE(c.timing->samples, 3);
    ASSERT_TRUE(c.correctness.has_value());
    EXPECT_TRUE(c.correctness->pass);
    EXPECT_LT(c.correctness->rel_l2, 1e-5);
    EXPECT_DOUBLE_EQ(c.flops, c.problem.flops());
    ASSERT_TRUE(c.tflops.has_value());
  }
  EXPECT_TRUE(fs::exists(out / "results.csv"));
  std::ifstream csv(out / "results.csv");
  int lines = 0;
  for (std::string line; std::getline(csv, line);) ++lines;
  EXPECT_EQ(lines, 9);  // header + 8 cases
  EXPECT_NE(o.output.find("cpu.flash"), std::string::npos);
  EXPECT_NE(o.output.find("2 of 2 kernels measured"), std::string::npos) << o.output;
}

TEST(RunCli, ExistingRunDirectoryNeedsForce) {
  const fs::path out = fresh_dir("force");
  const std::string args =
      "run --backend cpu --kernels cpu.flash --batch 1 --heads 1 --seq 16 --head-dim 8 "
      "--dtype fp32 --max-time-s 0.01 --out " +
      out.string();
  ASSERT_EQ(run_cli(args).exit_code, 0);
  const auto before = fs::file_size(out / "results.jsonl");
  const CliOutcome again = run_cli(args);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.output.find("--force"), std::string::npos) << again.output;
  EXPECT_EQ(fs::file_size(out / "results.jsonl"), before);  // nothing lost
  EXPECT_EQ(run_cli(args + " --force").exit_code, 0);
}

TEST(RunCli, MalformedFlagExitsTwoNamingFlagAndValue) {
  const CliOutcome o = run_cli("run --backend cpu --kernels cpu.flash --head-dim 64,abc --out " +
                               fresh_dir("bad_flag").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("--head-dim"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("abc"), std::string::npos) << o.output;
}

TEST(RunCli, UnknownKernelListsTheRegistry) {
  const CliOutcome o =
      run_cli("run --backend cpu --kernels cpu.flashy --out " + fresh_dir("bad_kernel").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("cpu.flashy"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("cpu.reference"), std::string::npos) << o.output;
}

TEST(RunCli, MalformedPresetNamesFileAndLine) {
  const fs::path dir = fresh_dir("bad_preset");
  fs::create_directories(dir);
  const fs::path preset = dir / "broken.toml";
  std::ofstream(preset) << "name = \"broken\"\nkernels = [\"cpu.flash\"]\n[sweep]\nhead_dim = \"64:32:x\"\n";
  const CliOutcome o =
      run_cli("run --backend cpu --preset " + preset.string() + " --out " + (dir / "out").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("broken.toml:4"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("head_dim"), std::string::npos) << o.output;
}

TEST(RunCli, UnsupportedCasesAreSkippedWithTheKernelsReason) {
  const fs::path out = fresh_dir("skips");
  const CliOutcome o = run_cli(
      "run --backend cpu --kernels cpu.flash --batch 1 --heads 1 --seq 16 --head-dim 8 "
      "--dtype fp16,fp32 --max-time-s 0.01 --out " +
      out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 2u);
  int skipped = 0;
  for (const CaseResult& c : run.cases) {
    if (c.problem.dtype == DType::fp16) {
      EXPECT_EQ(c.status, Status::skipped);
      EXPECT_NE(c.reason.find("dtype = fp16"), std::string::npos);
      EXPECT_FALSE(c.timing.has_value());
      ++skipped;
    } else {
      EXPECT_EQ(c.status, Status::ok);
    }
  }
  EXPECT_EQ(skipped, 1);
}

TEST(KernelsCli, ListsEveryRegisteredKernel) {
  const CliOutcome o = run_cli("kernels");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.output.find("cpu.reference"), std::string::npos);
  EXPECT_NE(o.output.find("cpu.flash"), std::string::npos);
}

// Issue 24: the table's columns line up (every row's knobs and description start under their
// header) and each kernel's knobs are listed with their values and defaults.
TEST(KernelsCli, AlignsColumnsAndShowsKnobs) {
  const CliOutcome o = run_cli("kernels");
  ASSERT_EQ(o.exit_code, 0);
  std::vector<std::string> lines;
  for (std::size_t at = 0, nl; at < o.output.size(); at = nl + 1) {
    nl = o.output.find('\n', at);
    if (nl == std::string::npos) nl = o.output.size();
    lines.push_back(o.output.substr(at, nl - at));
  }
  std::size_t header = 0;
  while (header < lines.size() && lines[header].rfind("kernel ", 0) != 0) ++header;
  ASSERT_LT(header, lines.size()) << o.output;
  const std::size_t knobs = lines[header].find("knobs"), desc = lines[header].find("description");
  ASSERT_NE(knobs, std::string::npos);
  ASSERT_NE(desc, std::string::npos);
  bool saw_flash = false;
  for (std::size_t i = header + 1; i < lines.size() && !lines[i].empty(); ++i) {
    const std::string& row = lines[i];
    ASSERT_GT(row.size(), desc) << row;
    EXPECT_EQ(row[knobs - 1], ' ') << row;
    EXPECT_NE(row[knobs], ' ') << row;
    EXPECT_EQ(row[desc - 1], ' ') << row;
    EXPECT_NE(row[desc], ' ') << row;
    if (row.rfind("cpu.flash ", 0) == 0) {
      saw_flash = true;
      EXPECT_EQ(row.substr(knobs, 15), "block_q block_k") << row;
    }
  }
  EXPECT_TRUE(saw_flash) << o.output;
  EXPECT_NE(o.output.find("Knobs"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("16,32,64,128"), std::string::npos) << o.output;
}

TEST(DevicesCli, SaysWhetherThereIsAGpu) {
  const CliOutcome o = run_cli("devices");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_TRUE(o.output.find("GPU 0:") != std::string::npos || o.output.find("no GPU:") != std::string::npos)
      << o.output;
}

}  // namespace
}  // namespace attn
