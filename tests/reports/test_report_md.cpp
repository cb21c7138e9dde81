// attnscope report: the pinned Markdown of a joined run (attnscope + an external baseline), the
// profiling summary with and without CUPTI data, observations, reproducibility commands, and the
// command writing report.md with its embedded figures.
#include <gtest/gtest.h>

#include <regex>

#include "profiling/sweep/plan.hpp"
#include "reports/report_md.hpp"
#include "tests/reports/golden.hpp"
#include "tests/reports/sample_results.hpp"
#include "tests/reports/test_report_util.hpp"

namespace attn {
namespace {

Problem gpu_problem(std::int64_t seq, bool causal) {
  Problem p;
  p.batch = 2;
  p.heads_q = p.heads_kv = 16;
  p.seq_q = p.seq_kv = seq;
  p.head_dim = p.head_dim_v = 128;
  p.dtype = DType::fp16;
  p.causal = causal;
  return p;
}

CaseResult gpu_case(const std::string& kernel, const Problem& p, double median_ms) {
  CaseResult c = test::ok_case(kernel, p, median_ms, 2.5e-4);
  c.correctness->tol = 1e-3;
  c.correctness->pass = true;
  c.correctness->reference = kernel.starts_with("torch.") ? "torch fp64 (sampled rows)" : "cuda.reference";
  c.queries_per_s = static_cast<double>(p.batch * p.heads_q * p.seq_q) / (median_ms * 1e-3);
  c.case_id = make_case_id(kernel, c.knobs, p);
  return c;
}

// Two problems, three attnscope kernels (one skipped everywhere, one mismatching once), and a
// torch.efficient baseline from a second file.
ResultSet sample_set() {
  ResultSet set;
  RunInfo run = test::full_run();
  run.protocol = Protocol{};
  run.baseline = "cudnn.sdpa";
  RunInfo torch = run;
  torch.run_id = "20250102-040000-torch-sdpa";
  torch.version = "tools/torch_sdpa.py 1 (torch 2.11.0)";
  torch.command_line = "python3 tools/torch_sdpa.py --preset quick --out runs/torch";
  const Problem a = gpu_problem(4096, false), b = gpu_problem(8192, true);
  auto skipped = [](const Problem& p) {
    CaseResult c = test::skipped_case("fa2.mma", p, "not built: needs sm_80+ | nvcc");
    c.case_id = make_case_id(c.kernel, c.knobs, p);
    return c;
  };
  std::vector<CaseResult> ours = {
      gpu_case("cudnn.sdpa", a, 0.45), gpu_case("cublas.unfused", a, 2.5), skipped(a),
      gpu_case("cudnn.sdpa", b, 0.9),  gpu_case("cublas.unfused", b, 4.4), skipped(b)};
  ours[4].status = Status::mismatch;
  ours[4].reason = "rel_l2 3.1e-01 > tol 1.0e-03";
  ours[4].correctness->rel_l2 = 0.31;
  ours[4].correctness->pass = false;
  std::vector<CaseResult> theirs = {gpu_case("torch.efficient", a, 1.2), gpu_case("torch.efficient", b, 2.0)};
  set.sources.push_back({"runs/h100/results.jsonl", run, ours.size()});
  set.sources.push_back({"runs/torch/results.jsonl", torch, theirs.size()});
  set.cases = ours;
  set.cases.insert(set.cases.end(), theirs.begin(), theirs.end());
  return set;
}

ReportOptions sample_options() {
  ReportOptions o;
  o.figures = {
      {"TFLOPS vs seq: fp16 full", "figures/tflops_vs_seq_fp16_full.png", "TFLOPS = flops / median."}};
  o.report_command = "attnscope report runs/h100 runs/torch";
  return o;
}

TEST(ReportMd, Golden) { test::expect_golden("report.md", markdown_report(sample_set(), sample_options())); }

TEST(ReportMd, SectionsAndCounts) {
  const std::string md = markdown_report(sample_set(), sample_options());
  for (const char* h : {"## Environment", "## Protocol", "## Configuration matrix", "## Results", "### fp16",
                        "## Skipped and failed cases", "## Profiling summary", "## Figures",
                        "## Observations", "## Reproducibility"})
    EXPECT_NE(md.find(h), std::string::npos) << h;
  EXPECT_NE(md.find("**3 of 4 kernels measured.** 8 cases: 5 ok, 2 skipped, 1 mismatch."), std::string::npos)
      << md;
  EXPECT_NE(md.find("Not measured on any case: `fa2.mma`."), std::string::npos);
  // The reason's pipe is escaped so the table keeps its columns.
  EXPECT_NE(md.find("not built: needs sm_80+ \\| nvcc"), std::string::npos);
  EXPECT_NE(md.find("![TFLOPS vs seq: fp16 full](figures/tflops_vs_seq_fp16_full.png)"), std::string::npos);
  // Speedup vs cudnn.sdpa: 0.45 / 2.5 = 0.18x for cublas.unfused; torch.efficient 0.45 / 1.2 = 0.38x.
  EXPECT_NE(md.find("| 0.18x |"), std::string::npos);
  EXPECT_NE(md.find("| 0.38x |"), std::string::npos);
}

TEST(ReportMd, BaselineOverride) {
  ReportOptions o = sample_options();
  o.baseline = "torch.efficient";
  const std::string md = markdown_report(sample_set(), o);
  EXPECT_NE(md.find("speedup vs torch.efficient"), std::string::npos);
  EXPECT_NE(md.find("| 2.67x |"), std::string::npos) << md;  // 1.2 / 0.45 for cudnn.sdpa
  EXPECT_NE(md.find("`cudnn.sdpa` vs `torch.efficient`: speedup peaks at 2.67x on 2x16x4096x128 fp16 full"),
            std::string::npos)
      << md;
}

// A bucketed variant's padding waste gets a column (and its definition) only where such a case is
// in the report, so reports without one keep their columns.
TEST(ReportMd, PaddingWasteColumnOnlyWithBucketedCases) {
  ResultSet set = sample_set();
  EXPECT_EQ(markdown_report(set, sample_options()).find("padding waste"), std::string::npos);
  CaseResult bucketed = gpu_case("cudnn.sdpa", set.cases[0].problem, 0.6);
  bucketed.knobs = {{"bucket", 128}};
  bucketed.variant = "cudnn.sdpa@bucket=128";
  bucketed.padding_waste = 0.0912;
  set.cases.push_back(bucketed);
  const std::string md = markdown_report(set, sample_options());
  EXPECT_NE(md.find("| padding waste |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 9.1% |"), std::string::npos) << md;
  EXPECT_NE(md.find("Padding waste (dense-bucketed cases, `@bucket=N`)"), std::string::npos);
}

TEST(ReportMd, EnvironmentNamesTheOsWhenRecorded) {
  ResultSet set = sample_set();
  EXPECT_EQ(markdown_report(set, sample_options()).find("| OS |"), std::string::npos);  // older runs: no row
  set.sources.front().run.os = "Ubuntu 24.04.1 LTS (Linux 6.8.0-49-generic)";
  EXPECT_NE(
      markdown_report(set, sample_options()).find("| OS | Ubuntu 24.04.1 LTS (Linux 6.8.0-49-generic) |"),
      std::string::npos);
}

TEST(ReportMd, ProfilingAbsentSaysNotCollectedNeverZero) {
  std::vector<nlohmann::json> records;
  for (const CaseResult& c : sample_set().cases) records.push_back(to_json(c));
  const std::string s = profiling_summary_md(records);
  EXPECT_NE(s.find("Launch statistics: not collected in this run."), std::string::npos) << s;
  EXPECT_NE(s.find("Hardware metrics (CUPTI): not collected in this run."), std::string::npos) << s;
  EXPECT_EQ(s.find("| 0 |"), std::string::npos);
}

TEST(ReportMd, ProfilingPresentShowsLaunchAndMetricMedians) {
  std::vector<nlohmann::json> records;
  const std::array<double, 3> sm{60.0, 80.0, 70.0};
  for (int i = 0; i < 3; ++i) {
    nlohmann::json r = to_json(gpu_case("cudnn.sdpa", gpu_problem(1024 << i, false), 0.1 * (i + 1)));
    r["launch"] = {
        {"grid", {132 * (i + 1), 1, 1}}, {"block", {384, 1, 1}}, {"regs", 168}, {"smem_dynamic", 221184}};
    r["metrics"] = {{"sm_throughput_pct", sm[static_cast<std::size_t>(i)]}, {"dram_bytes", 1.5e9 * (i + 1)}};
    records.push_back(r);
  }
  nlohmann::json other = to_json(gpu_case("cublas.unfused", gpu_problem(1024, false), 1.0));
  records.push_back(other);  // no profiling data for this kernel
  const std::string s = profiling_summary_md(records);
  EXPECT_EQ(s.find("not collected in this run"), std::string::npos) << s;
  // Launch stats of the largest case (seq 4096): grid 396x1x1.
  EXPECT_NE(s.find("| cudnn.sdpa | 2x16x4096x128 fp16 full | 396x1x1 | 384x1x1 | 168 | 221184 |"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("Not collected for `cublas.unfused`."), std::string::npos) << s;
  // Metric medians: sm 70, dram 3e9 -> "3.000 G".
  EXPECT_NE(s.find("| cudnn.sdpa | 3 of 3 | 70.00 | 3.000 G |"), std::string::npos) << s;
}

TEST(ReportMd, ProfilingUnavailableSaysWhy) {
  std::vector<nlohmann::json> records;
  for (int i = 0; i < 2; ++i) {
    nlohmann::json r = to_json(gpu_case("cudnn.sdpa", gpu_problem(1024 << i, false), 0.1));
    r["metrics_status"] = "unavailable";
    r["metrics_reason"] = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: run as root";
    records.push_back(r);
  }
  const std::string s = profiling_summary_md(records);
  EXPECT_NE(s.find("Hardware metrics (CUPTI): not collected in this run. unavailable on 2 cases: "
                   "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: run as root."),
            std::string::npos)
      << s;
}

TEST(ReportMd, ProfilingReadsTheAggregateAndExtraNotBookkeeping) {
  nlohmann::json r = to_json(gpu_case("cudnn.sdpa", gpu_problem(1024, false), 0.1));
  r["launch"] =
      nlohmann::json::array({{{"name", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob"},
                              {"grid", {128, 16, 2}},
                              {"block", {384, 1, 1}},
                              {"regs", 168}}});
  r["metrics"] = {{"sm_throughput_pct", 81.5},
                  {"extra", {{"lts__t_bytes.sum", 2e9}}},
                  {"kernels", nlohmann::json::array({{{"name", "k"}, {"sm_throughput_pct", 81.5}}})},
                  {"passes", 38},
                  {"wall_s", 0.4}};
  const std::string s = profiling_summary_md({r});
  EXPECT_NE(s.find("| kernel | cases | sm_throughput_pct | lts__t_bytes.sum |"), std::string::npos) << s;
  EXPECT_NE(s.find("| cudnn.sdpa | 1 of 1 | 81.50 | 2.000 G |"), std::string::npos) << s;
  EXPECT_EQ(s.find("passes"), std::string::npos) << s;
  EXPECT_NE(s.find("| cudnn.sdpa | 2x16x1024x128 fp16 full | "
                   "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f... | "
                   "128x16x2 | 384x1x1 | 168 |"),
            std::string::npos)
      << s;
}

TEST(ReportMd, ObservationsNearCeilingAndWithoutPeaks) {
  ResultSet set = sample_set();
  RunInfo run = set.primary();
  // Both cudnn.sdpa cases run at the same TFLOPS (half the pairs in twice the time at 8192
  // causal): a ceiling of that / 0.9 puts both at 90%.
  const double tflops = *set.cases[3].tflops;
  run.peaks = Peaks{};
  run.peaks.tensor_tflops_measured = tflops / 0.9;
  run.peaks.dram_gbps_measured = 3000;
  auto obs = report_observations(set.cases, run, "cudnn.sdpa", 0.8);
  ASSERT_FALSE(obs.empty());
  EXPECT_NE(obs.back().find("Roofline: 2 cases at >= 80% of a ceiling"), std::string::npos) << obs.back();
  EXPECT_NE(obs.back().find("at 90% of the tensor ceiling"), std::string::npos) << obs.back();
  EXPECT_NE(obs.front().find("fp16 full: fastest on 1 of 1 problems"), std::string::npos) << obs.front();
  run.peaks = Peaks{};
  obs = report_observations(set.cases, run, "cudnn.sdpa", 0.8);
  EXPECT_NE(obs.back().find("no ceilings were recorded"), std::string::npos) << obs.back();
}

TEST(ReportMd, SingleCaseCommands) {
  CaseResult c = gpu_case("cudnn.sdpa", test::gqa_problem(), 1.0);
  c.case_id = "0123456789abcdef";
  const Protocol p;
  EXPECT_EQ(
      single_case_command(c, p, "attnscope", false),
      "attnscope run --backend cuda --kernels cudnn.sdpa --batch 2 --heads 16 --heads-kv 4 --seq-q 1024 "
      "--seq-kv 2048 --head-dim 128 --head-dim-v 64 --dtype bf16 --causal 1 --window '256,0' --warmup-ms "
      "20.00 --min-samples 10 --max-samples 2000 --max-time-s 1.000 --noise 1.000 --l2 cold --seed 42 --out "
      "runs/repro-0123456789abcdef");
  EXPECT_EQ(
      single_case_command(c, p, "build/attnscope", true),
      "ncu --set full --nvtx --nvtx-include 'regex:attnscope@.*/' -o ncu-cudnn.sdpa-0123456789abcdef "
      "build/attnscope run --backend cuda --kernels cudnn.sdpa --batch 2 --heads 16 --heads-kv 4 --seq-q "
      "1024 --seq-kv 2048 --head-dim 128 --head-dim-v 64 --dtype bf16 --causal 1 --window '256,0' "
      "--no-check --warmup-ms 0 --min-samples 1 --max-samples 1 --l2 warm --seed 42 --out "
      "runs/ncu-0123456789abcdef --force");
}

class ReportCli : public test::TempDirTest {};

TEST_F(ReportCli, WritesReportWithEmbeddedFigures) {
  const ResultSet s = sample_set();
  std::vector<CaseResult> ours(s.cases.begin(), s.cases.begin() + 6),
      theirs(s.cases.begin() + 6, s.cases.end());
  const auto run_dir = write_run("h100", s.sources[0].run, ours);
  const auto torch_dir = write_run("torch", s.sources[1].run, theirs);
  const CliOutcome o = run_cli("report " + run_dir.string() + " " + (torch_dir / "results.jsonl").string() +
                               " --baseline torch.efficient");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const std::string md = slurp(run_dir / "report.md");
  EXPECT_NE(md.find("| torch/results.jsonl | 20250102-040000-torch-sdpa |"), std::string::npos) << md;
  // Every embedded image exists next to the report and is a PNG.
  const std::regex link(R"(!\[[^\]]*\]\(([^)]+)\))");
  int images = 0;
  for (auto it = std::sregex_iterator(md.begin(), md.end(), link); it != std::sregex_iterator(); ++it) {
    const auto png = run_dir / (*it)[1].str();
    ASSERT_TRUE(std::filesystem::exists(png)) << png;
    EXPECT_EQ(slurp(png).substr(1, 3), "PNG");
    ++images;
  }
  EXPECT_GE(images, 3) << md;  // TFLOPS, speedup, roofline
  EXPECT_NE(md.find("figures/roofline.png"), std::string::npos);
}

TEST_F(ReportCli, OutFlagAndNoFigures) {
  const ResultSet s = sample_set();
  const auto run_dir = write_run("h100", s.sources[0].run, s.cases);
  const auto out = m_dir / "elsewhere" / "r.md";
  const CliOutcome o = run_cli("report --no-figures -o " + out.string() + " " + run_dir.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(slurp(out).find("No figures were rendered for this report."), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(m_dir / "elsewhere" / "figures"));
}

TEST_F(ReportCli, BadInputExitsTwo) {
  auto o = run_cli("report " + (m_dir / "nothing").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  const auto run_dir = write_run("h100", test::full_run(), sample_set().cases);
  o = run_cli("report --no-figures --baseline fa9.x " + run_dir.string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("--baseline 'fa9.x' is not a kernel of these results"), std::string::npos)
      << o.output;
  o = run_cli("report");
  EXPECT_EQ(o.exit_code, 2) << o.output;
}

// With backward passes the report gains the forward/backward table: one row per kernel and shape,
// the backward over the forward, each pass's own timing; forward-only results have no such section.
TEST(ReportMd, ForwardAndBackwardTable) {
  EXPECT_EQ(markdown_report(sample_set(), sample_options()).find("## Forward and backward"),
            std::string::npos);
  ResultSet set = sample_set();
  Problem p = gpu_problem(4096, false);
  std::vector<CaseResult> passes;
  for (const auto& [pass, ms] : {std::pair{Pass::fwd, 0.5}, {Pass::bwd, 1.25}, {Pass::fwd_bwd, 1.8}}) {
    p.pass = pass;
    CaseResult c = gpu_case("cuda.reference", p, ms);
    c.tflops = c.problem.flops() / (ms * 1e-3) * 1e-12;
    c.gbps = static_cast<double>(c.problem.min_bytes(true)) / (ms * 1e-3) * 1e-9;
    c.device_bytes_peak = pass == Pass::fwd ? 64 << 20 : 192 << 20;
    passes.push_back(c);
  }
  set.cases = passes;
  const std::string md = markdown_report(set, sample_options());
  const auto at = md.find("## Forward and backward");
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_NE(md.find("| pass | `fwd`, `bwd`, `fwd+bwd` |"), std::string::npos);
  const std::string row =
      "| cuda.reference | 2x16x4096x128 fp16 full | 0.5 | 1.25 | 2.50 | 1.8 | 549.8 / 269.5 | 549.8 / 215.2 "
      "| "
      "534.5 / 224.3 | 64.0 MiB / 192.0 MiB |";
  EXPECT_NE(md.find(row, at), std::string::npos) << md.substr(at, 1200);
}

}  // namespace
}  // namespace attn
