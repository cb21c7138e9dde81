// Issue 18, C ABI plug-ins on the CPU backend: the C example plug-in runs in a sweep beside
// cpu.reference, passes the check, lands in results, CSV and the report, and its library is named
// in the run record (path, size, SHA-256); workers load it too. Each defect of a bad library exits 2
// naming the library, the symbol or field, and what was expected.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kernels/api/sha256.hpp"
#include "reports/jsonl_store.hpp"
#include "tests/support/cli_process.hpp"
#include "tests/support/test_paths.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnscope_plugin_" + name);
  fs::remove_all(d);
  return d;
}

const std::string kSweep =
    "run --backend cpu --kernels example.naive_c,cpu.reference --batch 2 --heads 4 --heads-kv 2 "
    "--seq-q 40 --seq-kv 56 --head-dim 16 --head-dim-v 24 --dtype fp32 --causal 0,1 --window 'none;8,2' "
    "--max-time-s 0.02 --warmup-ms 1 ";

TEST(Plugins, TheCExamplePluginRunsBesideCpuReferenceInWorkersAndIsRecorded) {
  const std::string lib = test::example_plugin();
  ASSERT_TRUE(fs::exists(lib)) << lib;
  const fs::path out = fresh_dir("example");
  const CliOutcome o = run_cli(kSweep + "--plugin " + lib + " --report --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 8u);  // 2 kernels x 2 masks x 2 windows
  int plugin_cases = 0;
  for (const CaseResult& c : run.cases) {
    ASSERT_EQ(c.status, Status::ok) << c.kernel << " " << c.reason;
    ASSERT_TRUE(c.correctness) << c.kernel;
    EXPECT_TRUE(c.correctness->pass) << c.kernel;
    if (c.kernel == "example.naive_c") {
      ++plugin_cases;
      EXPECT_LT(c.correctness->rel_l2, 1e-5);  // fp32 against the fp64 reference
      ASSERT_TRUE(c.timing);
      EXPECT_GT(c.timing->median_ms, 0.0);
    }
  }
  EXPECT_EQ(plugin_cases, 4);
  ASSERT_EQ(run.run.plugins.size(), 1u);
  const PluginRecord& p = run.run.plugins[0];
  EXPECT_EQ(p.path, fs::canonical(lib).string());
  EXPECT_EQ(p.size, static_cast<std::int64_t>(fs::file_size(lib)));
  EXPECT_EQ(p.sha256, sha256_file(lib));
  EXPECT_EQ(p.kernels, std::vector<std::string>{"example.naive_c"});

  std::ifstream csv(out / "results.csv");
  const std::string text((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("example.naive_c"), std::string::npos);
  std::ifstream md(out / "report.md");
  const std::string report((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("example.naive_c"), std::string::npos);
}

// Issue 20, ABI version 2: the C example declares a backward; its bwd and fwd+bwd cases run in
// workers and their gradients pass the check against cpu.reference's exact backward, over GQA,
// Sq != Sk, causal and a window. A version 1 table (no backward) still loads, and its kernel's bwd
// cases are skipped with the reason.
TEST(Plugins, APluginDeclaresABackwardAndAVersion1TableStillLoads) {
  const std::string lib = test::example_plugin();
  const fs::path out = fresh_dir("backward");
  const CliOutcome o = run_cli(
      "run --backend cpu --kernels example.naive_c,cpu.reference,test.versioned --batch 2 --heads 4 "
      "--heads-kv 2 --seq-q 40 --seq-kv 56 --head-dim 16 --head-dim-v 24 --dtype fp32 --causal 0,1 "
      "--window 'none;8,2' --max-time-s 0.02 --warmup-ms 1 --pass bwd,fwd+bwd --plugin " +
      lib + " --plugin " + test::test_plugin("versioned_v1") + " --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 24u);  // 3 kernels x 2 masks x 2 windows x 2 passes
  int plugin_cases = 0;
  for (const CaseResult& c : run.cases) {
    ASSERT_TRUE(has_backward(c.problem.pass));
    if (c.kernel == "test.versioned") {
      EXPECT_EQ(c.status, Status::skipped);
      EXPECT_EQ(c.reason, "test.versioned has no backward pass (pass = " +
                              std::string(to_string(c.problem.pass)) + "); run it with pass = fwd");
      continue;
    }
    ASSERT_EQ(c.status, Status::ok) << c.kernel << " " << c.reason;
    ASSERT_TRUE(c.grad_dq && c.grad_dk && c.grad_dv) << c.kernel;
    EXPECT_TRUE(c.grad_dq->pass && c.grad_dk->pass && c.grad_dv->pass) << c.kernel;
    if (c.kernel == "example.naive_c") {
      ++plugin_cases;
      EXPECT_LT(c.grad_dk->rel_l2, 1e-5);
      EXPECT_LT(c.grad_dq->rel_l2, 1e-5);
    }
  }
  EXPECT_EQ(plugin_cases, 8);
}

TEST(Plugins, KernelsListsThePluginKernelWithItsLibraryAndTheEnvironmentVariableLoadsIt) {
  const std::string lib = test::example_plugin();
  const CliOutcome o = run_cli("kernels --plugin " + lib);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("example.naive_c"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("[plug-in " + fs::canonical(lib).string() + "]"), std::string::npos) << o.output;
  // ATTNSCOPE_PLUGIN_PATH loads it without --plugin.
  const CliOutcome env = run_cli("kernels --json", "ATTNSCOPE_PLUGIN_PATH=" + lib);
  ASSERT_EQ(env.exit_code, 0) << env.output;
  EXPECT_NE(env.output.find("\"plugin\""), std::string::npos) << env.output;
  EXPECT_NE(env.output.find("\"example.naive_c\""), std::string::npos) << env.output;
}

TEST(Plugins, EachBadLibraryExits2NamingTheLibraryTheFieldAndWhatWasExpected) {
  struct Bad {
    const char* name;
    const char* says;
  };
  for (const Bad& b : {Bad{"bad_abi", "abi_version is 99; this attnscope reads versions 1 to 2"},
                       Bad{"no_entry", "no symbol 'attnscope_plugin'"},
                       Bad{"dup_id", "kernel 'cpu.reference' is already registered (a built-in kernel)"},
                       Bad{"null_run", ".run is NULL; expected a function"},
                       Bad{"bwd_no_lse", "backward[0].run is set but writes_lse is 0"}}) {
    SCOPED_TRACE(b.name);
    const std::string lib = test::test_plugin(b.name);
    ASSERT_TRUE(fs::exists(lib)) << lib;
    const fs::path out = fresh_dir(b.name);
    const CliOutcome o = run_cli(kSweep + "--plugin " + lib + " --out " + out.string());
    EXPECT_EQ(o.exit_code, 2) << o.output;
    EXPECT_NE(o.output.find(fs::canonical(lib).string()), std::string::npos) << o.output;
    EXPECT_NE(o.output.find(b.says), std::string::npos) << o.output;
    EXPECT_FALSE(fs::exists(out / "results.jsonl"));  // nothing ran
  }
  const CliOutcome missing =
      run_cli(kSweep + "--plugin /nonexistent/libnothing.so --out " + fresh_dir("x").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("/nonexistent/libnothing.so: no such file"), std::string::npos)
      << missing.output;
}

// A plug-in kernel that kills its worker costs its own cases, recorded as `fault`; the built-in
// kernel of the same sweep is measured and the run ends with exit 1 (some cases failed).
TEST(Plugins, APluginThatCrashesItsWorkerCostsOnlyItsCases) {
  const std::string lib = test::test_plugin("crash");
  const fs::path out = fresh_dir("crash");
  const CliOutcome o = run_cli(
      "run --backend cpu --kernels crash.segv,cpu.reference --batch 1 --heads 2 --seq 32,48 --head-dim 16 "
      "--dtype fp32 --max-time-s 0.01 --quiet --plugin " +
      lib + " --out " + out.string());
  EXPECT_EQ(o.exit_code, 1) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 4u);
  for (const CaseResult& c : run.cases) {
    if (c.kernel == "crash.segv") {
      EXPECT_EQ(c.status, Status::fault) << c.reason;
      EXPECT_NE(c.reason.find("SIGSEGV"), std::string::npos) << c.reason;
    } else {
      EXPECT_EQ(c.status, Status::ok) << c.reason;
    }
  }
}

// `plugins = [...]` in a preset (relative to its folder) brings the kernels the preset lists, and
// --resume reloads the run's plug-ins from its record without --plugin.
TEST(Plugins, APresetNamesItsPluginsAndResumeReloadsThem) {
  const fs::path dir = fresh_dir("preset");
  fs::create_directories(dir);
  fs::copy_file(test::example_plugin(), dir / "libmine.so");
  std::ofstream(dir / "mine.toml") << R"(plugins = ["libmine.so"]
kernels = ["example.naive_c", "cpu.reference"]
backend = "cpu"
[sweep]
batch = 1
heads = 2
seq = [32, 48]
head_dim = 16
dtype = "fp32"
[protocol]
max_time_s = 0.01
)";
  const fs::path out = dir / "run";
  const CliOutcome o =
      run_cli("run --preset " + (dir / "mine.toml").string() + " --quiet --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 4u);
  ASSERT_EQ(run.run.plugins.size(), 1u);
  EXPECT_EQ(run.run.plugins[0].path, (dir / "libmine.so").string());
  {  // cut the last case line, then resume with no plug-in flag
    std::ifstream in(out / "results.jsonl");
    std::string text, line;
    for (int n = 0; std::getline(in, line) && n < 4; ++n) text += line + "\n";
    std::ofstream(out / "results.jsonl", std::ios::trunc) << text;
  }
  const CliOutcome r = run_cli("run --resume " + out.string() + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 4u);
  for (const CaseResult& c : run.cases) EXPECT_EQ(c.status, Status::ok) << c.kernel << " " << c.reason;

  std::ofstream(dir / "bad.toml") << "plugins = [\"libmissing.so\"]\nkernels = [\"cpu.reference\"]\n";
  const CliOutcome bad = run_cli("run --preset " + (dir / "bad.toml").string() + " --backend cpu --out " +
                                 (dir / "bad").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("plugins: " + (dir / "libmissing.so").string() + ": no such file"),
            std::string::npos)
      << bad.output;
}

TEST(Plugins, Sha256MatchesTheStandardVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

}  // namespace
}  // namespace attn
