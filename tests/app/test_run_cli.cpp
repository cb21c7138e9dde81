// End-to-end runs of the attnscope executable on the CPU backend: exit codes, files, messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

// Issue 24 item 4: a sweep in which nothing can run exited 0, and an impossible shape typed as flags
// was planned as a skipped case. Both are bad input (exit 2) with the reason; nothing is written.
TEST(RunCli, NothingToRunAndImpossibleFlagShapesExitTwo) {
  const std::string common =
      "run --backend cpu --kernels cpu.flash,cpu.reference --batch 1 --seq 16 --head-dim 8 ";
  const fs::path fp16 = fresh_dir("nothing_fp16");
  CliOutcome o = run_cli(common + "--heads 1 --dtype fp16 --out " + fp16.string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("nothing to run: all 2 planned cases are skipped: 1 x cpu.flash: dtype = fp16"),
            std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(fp16 / "results.jsonl"));

  const fs::path gqa = fresh_dir("nothing_gqa");
  o = run_cli(common + "--heads 2 --heads-kv 3 --dtype fp32 --out " + gqa.string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("heads_kv = 3: must divide heads_q = 2"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(gqa / "results.jsonl"));

  // The shipped GPU preset on the CPU backend: every kernel needs the cuda backend (in a build
  // without CUDA the kernels are not even registered, which is said at the preset's line).
  o = run_cli("run --backend cpu --preset quick --out " + fresh_dir("nothing_quick").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(o.output.find("needs the cuda backend; this run uses cpu") != std::string::npos ||
              o.output.find("quick.toml:5:12: unknown kernel 'cudnn.sdpa'") != std::string::npos)
      << o.output;
}

// Issue 24 item 5: seq = 2^40 spun in the pair count; it is refused at planning, at once, with the
// limit named.
TEST(RunCli, SizesPastAnyDeviceAreRefusedAtPlanning) {
  const auto t0 = std::chrono::steady_clock::now();
  const CliOutcome o = run_cli(
      "run --backend cpu --kernels cpu.flash --batch 1 --heads 1 --seq 1099511627776 --head-dim 8 "
      "--dtype fp32 --out " +
      fresh_dir("huge").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("needs 128 TiB for Q, K, V and O; the limit is 1.00 TiB"), std::string::npos)
      << o.output;
  const CliOutcome range = run_cli(
      "run --backend cpu --kernels cpu.flash --batch 1 --heads 1 --seq 1:9223372036854775807:x2 --head-dim 8 "
      "--dtype fp32 --causal 1 --out " +
      fresh_dir("huge_range").string());
  EXPECT_EQ(range.exit_code, 2) << range.output;
  // 128 bytes per position (Q, K, V, O of D = 8 in fp32): 2^34 is the first past 1 TiB.
  EXPECT_NE(range.output.find("Sq=17179869184"), std::string::npos) << range.output;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);
  const CliOutcome too_big =
      run_cli("run --backend cpu --kernels cpu.flash --seq 99999999999999999999 --out " +
              fresh_dir("huge_int").string());
  EXPECT_EQ(too_big.exit_code, 2) << too_big.output;
  EXPECT_NE(too_big.output.find("is too large"), std::string::npos) << too_big.output;
}

// Issue 24 item 8: --out naming a file exited 1 and advised --resume; --backend cuda without a GPU
// tried three worker starts.
TEST(RunCli, OutAtAFileAndCudaWithoutAGpuExitTwoAtOnce) {
  const fs::path dir = fresh_dir("out_file");
  fs::create_directories(dir);
  std::ofstream(dir / "afile") << "x";
  const std::string sweep = "run --kernels cpu.flash --batch 1 --heads 1 --seq 16 --head-dim 8 --dtype fp32 ";
  CliOutcome o = run_cli(sweep + "--backend cpu --out " + (dir / "afile").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("is a file, not a directory"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("--resume"), std::string::npos) << o.output;

  if (run_cli("devices").output.find("no GPU:") == std::string::npos) GTEST_SKIP() << "this host has a GPU";
  o = run_cli(sweep + "--backend cuda --out " + (dir / "cuda").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("--backend cuda: the cuda backend needs a GPU and there is none here"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("--backend cpu"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("failed starts"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(dir / "cuda" / "results.jsonl"));
}

TEST(KernelsCli, ListsEveryRegisteredKernel) {
  const CliOutcome o = run_cli("kernels");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.output.find("cpu.reference"), std::string::npos);
  EXPECT_NE(o.output.find("cpu.flash"), std::string::npos);
}

// Issue 20: a `bwd` column says which kernels have a backward; --json gives the refusal's reason.
TEST(KernelsCli, SaysWhichKernelsHaveABackward) {
  const CliOutcome o = run_cli("kernels --json");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto all = nlohmann::json::parse(o.output);
  bool saw = false;
  for (const auto& k : all) {
    if (k["id"] != "cpu.flash") continue;
    saw = true;
    EXPECT_EQ(k["supports"]["bwd"], true) << k.dump();
    EXPECT_FALSE(k.contains("refuses") && k["refuses"].contains("bwd")) << k.dump();
  }
  EXPECT_TRUE(saw) << o.output;
  const CliOutcome table = run_cli("kernels");
  EXPECT_NE(table.output.find("d!=dv  bwd"), std::string::npos) << table.output;
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
