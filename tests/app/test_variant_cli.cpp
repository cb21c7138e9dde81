// Kernel variants end to end on the CPU backend: `run --kernels` with two knob settings of one
// kernel through the isolated workers, a variant as the baseline, then `report` and `plot` of the
// results keep the two apart; a bad knob is refused before anything runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "reports/jsonl_store.hpp"
#include "tests/support/cli_process.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnscope_variant_" + name);
  fs::remove_all(d);
  return d;
}

std::string slurp(const fs::path& f) {
  std::ifstream in(f);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(VariantCli, TwoKnobSettingsOfOneKernelRunAndReportApart) {
  const fs::path out = fresh_dir("run");
  const CliOutcome o = run_cli(
      "run --backend cpu --kernels cpu.reference,cpu.flash,cpu.flash@block_q=16+block_k=32 "
      "--baseline cpu.flash@block_k=32+block_q=16 --batch 1 --heads 2 --seq 32,64 --head-dim 16 "
      "--max-time-s 0.02 --out " +
      out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("speedup vs cpu.flash@block_k=32+block_q=16"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("3 of 3 kernels measured"), std::string::npos) << o.output;

  const LoadedRun run = read_results(out / "results.jsonl");
  EXPECT_EQ(run.run.baseline, "cpu.flash@block_k=32+block_q=16");
  ASSERT_EQ(run.cases.size(), 6u);
  for (std::size_t i = 0; i < run.cases.size(); ++i) {
    const CaseResult& c = run.cases[i];
    EXPECT_EQ(c.status, Status::ok) << c.kernel << " " << c.reason;
    if (i % 3 == 2) {
      EXPECT_EQ(c.kernel, "cpu.flash");
      EXPECT_EQ(c.knobs, (Knobs{{"block_q", 16}, {"block_k", 32}}));
      EXPECT_EQ(variant_label(c), "cpu.flash@block_k=32+block_q=16");
    } else {
      EXPECT_EQ(variant_label(c), c.kernel);
    }
  }
  EXPECT_NE(run.cases[1].case_id, run.cases[2].case_id);

  const fs::path md = out / "report.md";
  const CliOutcome rep = run_cli("report " + out.string() + " --no-figures -o " + md.string());
  ASSERT_EQ(rep.exit_code, 0) << rep.output;
  const std::string text = slurp(md);
  EXPECT_NE(text.find("| baseline | `cpu.flash@block_k=32+block_q=16` |"), std::string::npos) << text;
  const CliOutcome other =
      run_cli("report " + out.string() + " --no-figures --baseline cpu.flash -o " + (out / "r2.md").string());
  EXPECT_EQ(other.exit_code, 0) << other.output;
  const CliOutcome missing =
      run_cli("report " + out.string() + " --no-figures --baseline cpu.flash@block_q=32");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("kernels: cpu.flash, cpu.flash@block_k=32+block_q=16, cpu.reference"),
            std::string::npos)
      << missing.output;

  const CliOutcome plot =
      run_cli("plot " + out.string() + " --x seq --y speedup -o " + (out / "s.png").string());
  ASSERT_EQ(plot.exit_code, 0) << plot.output;
  EXPECT_NE(plot.output.find("2 series"), std::string::npos) << plot.output;  // cpu.reference and cpu.flash
}

TEST(VariantCli, BadKnobValueIsRefusedBeforeRunning) {
  const fs::path out = fresh_dir("bad");
  const CliOutcome o = run_cli(
      "run --backend cpu --kernels cpu.flash@block_q=20 --batch 1 --heads 1 --seq 16 "
      "--head-dim 8 --out " +
      out.string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("knob 'block_q' of cpu.flash = 20 is not one of its compiled values; expected "
                          "block_q in {16, 32, 64, 128}"),
            std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(out / "results.jsonl"));
}

}  // namespace
}  // namespace attn
