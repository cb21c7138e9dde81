// Kernel variants in the outputs: the variant label and knobs survive result JSON and the worker
// protocol, and two variants of one kernel stay two series / rows / kernels in the plot, the
// summary table, the Markdown report, compare and crossover, with a variant as the baseline.
#include <gtest/gtest.h>

#include <algorithm>

#include "profiling/sweep/plan.hpp"
#include "reports/compare.hpp"
#include "reports/crossover.hpp"
#include "reports/plot/plot_build.hpp"
#include "reports/report_md.hpp"
#include "reports/result_json.hpp"
#include "reports/summary_table.hpp"
#include "reports/worker_json.hpp"
#include "tests/reports/sample_results.hpp"
#include "tests/reports/test_report_util.hpp"

namespace attn {
namespace {

constexpr const char* kTiled = "cpu.flash@block_k=32+block_q=16";

// A case of cpu.flash at `knobs` (labelled as the engine labels it), with its real case id.
CaseResult flash_case(const Knobs& knobs, const Problem& p, double median_ms) {
  CaseResult c = test::ok_case("cpu.flash", p, median_ms, 2e-7);
  c.knobs = knobs;
  if (knobs != Knobs{{"block_q", 64}, {"block_k", 64}}) c.variant = kTiled;
  c.case_id = make_case_id(c.kernel, c.knobs, p);
  return c;
}

CaseResult reference_case(const Problem& p, double median_ms) {
  CaseResult c = test::ok_case("cpu.reference", p, median_ms, 0);
  c.case_id = make_case_id(c.kernel, c.knobs, p);
  return c;
}

const Knobs kDefaultKnobs{{"block_q", 64}, {"block_k", 64}};
const Knobs kTiledKnobs{{"block_q", 16}, {"block_k", 32}};

// seq 64, 128, 256: the reference at 4 ms x seq/64; the default cpu.flash 2x and the tiled
// variant 4x faster than it, except at seq 64 where the tiled one is only 1.05x faster.
std::vector<CaseResult> variant_sweep() {
  std::vector<CaseResult> cases;
  for (const std::int64_t seq : {64, 128, 256}) {
    const Problem p = test::small_problem(seq, false);
    const double ref = 4.0 * static_cast<double>(seq) / 64.0;
    cases.push_back(reference_case(p, ref));
    cases.push_back(flash_case(kDefaultKnobs, p, ref / 2));
    cases.push_back(flash_case(kTiledKnobs, p, seq == 64 ? ref / 1.05 : ref / 4));
  }
  return cases;
}

std::vector<std::string> labels(const plot::Plot& p) {
  std::vector<std::string> v;
  for (const plot::Series& s : p.series) v.push_back(s.label);
  return v;
}

TEST(VariantReports, ResultJsonKeepsKnobsAndTheVariantLabel) {
  const CaseResult v = flash_case(kTiledKnobs, test::small_problem(64, true), 1.0);
  const nlohmann::json j = to_json(v);
  EXPECT_EQ(j.at("variant"), kTiled);
  EXPECT_EQ(j.at("knobs"), (nlohmann::json{{"block_k", 32}, {"block_q", 16}}));
  const CaseResult back = case_result_from_json(j);
  EXPECT_EQ(back.knobs, kTiledKnobs);
  EXPECT_EQ(back.variant, kTiled);
  EXPECT_EQ(variant_label(back), kTiled);
  EXPECT_EQ(back.case_id, v.case_id);

  // The default variant writes no "variant" (records as before variants existed) and reads as its id.
  const CaseResult d = flash_case(kDefaultKnobs, test::small_problem(64, true), 1.0);
  const nlohmann::json dj = to_json(d);
  EXPECT_FALSE(dj.contains("variant"));
  EXPECT_EQ(variant_label(case_result_from_json(dj)), "cpu.flash");

  // A label that contradicts the knobs is refused, naming the field.
  nlohmann::json bad = j;
  bad["variant"] = "cpu.flash@block_q=32";
  try {
    case_result_from_json(bad);
    ADD_FAILURE() << "a variant label contradicting the knobs was accepted";
  } catch (const ResultsFormatError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "case.variant: \"cpu.flash@block_q=32\" sets block_q=32 but the record's knobs have block_q=16");
  }
  bad["variant"] = "cpu.reference@block_q=16";
  EXPECT_THROW(case_result_from_json(bad), ResultsFormatError);
}

TEST(VariantReports, WorkerProtocolCarriesKnobsBothWays) {
  const JsonWorkerCodec codec;
  Case c;
  c.kernel = "cpu.flash";
  c.knobs = kTiledKnobs;
  c.problem = test::small_problem(48, false);
  c.case_id = make_case_id(c.kernel, c.knobs, c.problem);
  const WorkerInput in = codec.decode_input(codec.encode_case(c, std::nullopt));
  ASSERT_TRUE(in.work.has_value());
  EXPECT_EQ(in.work->knobs, kTiledKnobs);
  EXPECT_EQ(in.work->case_id, c.case_id);
  // A case line whose knobs were changed no longer matches its id.
  std::string tampered = codec.encode_case(c, std::nullopt);
  tampered.replace(tampered.find("\"block_q\":16"), 12, "\"block_q\":32");
  EXPECT_THROW(codec.decode_input(tampered), WorkerProtocolError);

  const CaseResult r = flash_case(kTiledKnobs, c.problem, 0.5);
  const CaseResult back = codec.decode_result(codec.encode_result(r));
  EXPECT_EQ(back.knobs, kTiledKnobs);
  EXPECT_EQ(back.variant, kTiled);
  EXPECT_EQ(back.case_id, r.case_id);
}

TEST(VariantReports, SummaryTableRowsAndBaselineUseTheLabel) {
  const std::string t = format_summary(variant_sweep(), kTiled);
  EXPECT_NE(t.find("speedup vs cpu.flash@block_k=32+block_q=16"), std::string::npos) << t;
  // seq 128: reference 8 ms, default 4 ms, tiled 2 ms -> 0.25x, 0.50x, 1.00x against the tiled one.
  std::vector<std::string> rows;
  for (std::size_t a = 0, b; (b = t.find('\n', a)) != std::string::npos; a = b + 1)
    rows.push_back(t.substr(a, b - a));
  ASSERT_GE(rows.size(), 8u);
  EXPECT_EQ(rows[5].rfind("cpu.reference ", 0), 0u) << rows[5];
  EXPECT_NE(rows[5].find(" 0.25x "), std::string::npos) << rows[5];
  EXPECT_EQ(rows[6].rfind("cpu.flash ", 0), 0u) << rows[6];
  EXPECT_NE(rows[6].find(" 0.50x "), std::string::npos) << rows[6];
  EXPECT_EQ(rows[7].rfind("cpu.flash@block_k=32+block_q=16 ", 0), 0u) << rows[7];
  EXPECT_NE(rows[7].find(" 1.00x "), std::string::npos) << rows[7];
  EXPECT_NE(t.find("3 of 3 kernels measured"), std::string::npos) << t;
}

class VariantFiles : public test::TempDirTest {};

TEST_F(VariantFiles, PlotDrawsTwoVariantsAsTwoSeries) {
  RunInfo run = test::full_run();
  run.baseline = "cpu.reference";
  const LoadedRun loaded = read_results(write_run("variants", run, variant_sweep()) / "results.jsonl");
  ASSERT_EQ(loaded.cases.size(), 9u);
  EXPECT_EQ(variant_label(loaded.cases[2]), kTiled);
  const std::vector<LoadedRun> runs{loaded};

  plot::PlotSpec spec;
  spec.x = "seq";
  spec.y = "tflops";
  EXPECT_EQ(labels(plot::build_plot(runs, spec)),
            (std::vector<std::string>{"cpu.reference", "cpu.flash", kTiled}));
  // Grouping by another axis does not merge the variants either (the knobs are not a split axis then).
  spec.group_by = {"dtype"};
  const plot::Plot grouped = plot::build_plot(runs, spec);
  // (dtype has one value, so labels leave it to the subtitle.)
  EXPECT_EQ(labels(grouped), (std::vector<std::string>{"cpu.reference", "cpu.flash", kTiled}));
  ASSERT_EQ(grouped.series.size(), 3u);
  EXPECT_EQ(grouped.series[2].kernel, kTiled);
  EXPECT_EQ(grouped.series[1].kernel, "cpu.flash");
  EXPECT_NE(grouped.series[1].y, grouped.series[2].y);

  // Speedup over the run's baseline: one series per variant; over a variant: the variant is left out.
  spec.group_by.clear();
  spec.y = "speedup";
  const plot::Plot sp = plot::build_plot(runs, spec);
  EXPECT_EQ(labels(sp), (std::vector<std::string>{"cpu.flash", kTiled}));
  EXPECT_EQ(sp.series[0].y, (std::vector<double>{2, 2, 2}));
  ASSERT_EQ(sp.series[1].y.size(), 3u);
  EXPECT_NEAR(sp.series[1].y[0], 1.05, 1e-12);
  EXPECT_NEAR(sp.series[1].y[2], 4, 1e-12);
  spec.baseline = kTiled;
  const plot::Plot over_variant = plot::build_plot(runs, spec);
  EXPECT_EQ(labels(over_variant), (std::vector<std::string>{"cpu.reference", "cpu.flash"}));
  EXPECT_NEAR(over_variant.series[1].y[2], 0.5, 1e-12);
  EXPECT_EQ(over_variant.y.title(), "Speedup over cpu.flash@block_k=32+block_q=16 [×]");

  // The kernels filter: an id keeps all its variants, a label just that one.
  spec = {};
  spec.x = "seq";
  spec.kernels = {"cpu.flash"};
  EXPECT_EQ(labels(plot::build_plot(runs, spec)), (std::vector<std::string>{"cpu.flash", kTiled}));
  spec.kernels = {kTiled};
  EXPECT_EQ(labels(plot::build_plot(runs, spec)), (std::vector<std::string>{kTiled}));
}

TEST(VariantReports, MarkdownReportNamesVariantsApart) {
  ResultSet set;
  RunInfo run = test::full_run();
  run.baseline = kTiled;
  set.sources.push_back({"runs/v/results.jsonl", run, 9});
  set.cases = variant_sweep();
  const std::string md = markdown_report(set, {});
  EXPECT_NE(md.find("9 cases of 3 kernels"), std::string::npos) << md;
  EXPECT_NE(md.find("| kernels | `cpu.reference`, `cpu.flash`, `cpu.flash@block_k=32+block_q=16` |"),
            std::string::npos);
  EXPECT_NE(md.find("| baseline | `cpu.flash@block_k=32+block_q=16` |"), std::string::npos);
  EXPECT_NE(md.find("| cpu.flash@block_k=32+block_q=16 | 1x2x128x32 fp32 full block_k=32 block_q=16 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("`cpu.flash` vs `cpu.flash@block_k=32+block_q=16`: speedup peaks at"), std::string::npos);
  // The re-run command of a variant's case runs that variant.
  const std::string cmd = single_case_command(set.cases[2], Protocol{}, "attnscope", false);
  EXPECT_EQ(cmd.rfind("attnscope run --backend cuda --kernels cpu.flash@block_k=32+block_q=16 --batch 1 ", 0),
            0u)
      << cmd;
}

TEST(VariantReports, CompareAndCrossoverTakeVariantLabels) {
  const std::vector<CaseResult> cases = variant_sweep();
  const CompareReport rep = compare_results(cases, cases, {});
  ASSERT_EQ(rep.rows.size(), 9u);
  EXPECT_EQ(
      std::count_if(rep.rows.begin(), rep.rows.end(), [](const CompareRow& r) { return r.kernel == kTiled; }),
      3);

  // The tiled variant beats the reference by 1.1x from seq 128 on; the default one from seq 64.
  CrossoverOptions o{kTiled, "cpu.reference", CrossAxis::seq, 1.1, ""};
  const CrossoverResult r = find_crossovers(cases, o);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].threshold, 128);
  ASSERT_EQ(r.groups[0].points.size(), 3u);
  EXPECT_NEAR(r.groups[0].points[0].speedup, 1.05, 1e-12);
  o.a = "cpu.flash";
  EXPECT_EQ(find_crossovers(cases, o).groups[0].threshold, 64);
  o.a = "cpu.flash@block_q=32";
  try {
    find_crossovers(cases, o);
    ADD_FAILURE() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "kernels with ok cases: cpu.flash, cpu.flash@block_k=32+block_q=16, cpu.reference"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace attn
