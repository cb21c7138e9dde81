// render_report_figures() panel choice on a head-dim sweep (the ffpa-large-d shape): Dv follows
// a head_dim x axis, so the sweep is one panel, not one panel per D.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "reports/report_figures.hpp"
#include "tests/reports/sample_results.hpp"
#include "tests/reports/test_report_util.hpp"

namespace attn {
namespace {

class ReportFigures : public test::TempDirTest {};

ResultSet head_dim_sweep(bool with_dv_off_d) {
  ResultSet set;
  ResultSource src;
  src.run = test::full_run();
  set.sources.push_back(src);
  for (const std::int64_t d : {256, 320, 384}) {
    Problem p = test::small_problem(512, false);
    p.head_dim = p.head_dim_v = d;
    set.cases.push_back(test::ok_case("cublas.unfused", p, 2.0, 1e-4));
    set.cases.push_back(test::ok_case("ffpa.l1.acc_f16", p, 1.0, 1e-4));
    // A refused case with Dv != D must not change the panels' shape.
    Problem q = p;
    q.head_dim_v = 64;
    set.cases.push_back(test::skipped_case("fa2.mma", q, "head_dim 320 > 256"));
  }
  if (with_dv_off_d) {
    Problem p = test::small_problem(512, false);
    p.head_dim = 256;
    p.head_dim_v = 128;
    set.cases.push_back(test::ok_case("ffpa.l1.acc_f16", p, 1.0, 1e-4));
  }
  return set;
}

std::vector<std::string> links(const std::vector<ReportFigure>& f) {
  std::vector<std::string> v;
  for (const ReportFigure& x : f) v.push_back(x.path);
  return v;
}

TEST_F(ReportFigures, HeadDimSweepIsOnePanel) {
  FigureOptions o;
  o.baseline = "cublas.unfused";
  o.out_dir = m_dir / "figures";
  o.link_prefix = "figures/";
  std::vector<std::string> notes;
  const auto figures = render_report_figures(head_dim_sweep(false), o, notes);
  EXPECT_EQ(links(figures),
            (std::vector<std::string>{"figures/tflops_vs_head_dim_fp32_full.png",
                                      "figures/speedup_vs_head_dim_fp32_full.png", "figures/roofline.png"}));
  ASSERT_GE(figures.size(), 1u);
  EXPECT_NE(figures[0].caption.find("Dv=D"), std::string::npos) << figures[0].caption;
  EXPECT_TRUE(notes.empty()) << notes.front();

  // Where some measured case has Dv != D, Dv keeps splitting panels.
  const auto split = links(render_report_figures(head_dim_sweep(true), o, notes));
  EXPECT_NE(std::find(split.begin(), split.end(), "figures/tflops_vs_head_dim_fp32_full_Dv_128.png"),
            split.end());
  EXPECT_NE(std::find(split.begin(), split.end(), "figures/tflops_vs_head_dim_fp32_full_Dv_256.png"),
            split.end());
}

// A run with several passes draws each pass as its own series (never the best of them at one x).
TEST_F(ReportFigures, PassesAreSeparateSeries) {
  ResultSet set;
  ResultSource src;
  src.run = test::full_run();
  set.sources.push_back(src);
  for (const Pass pass : {Pass::fwd, Pass::bwd})
    for (const std::int64_t seq : {256, 512}) {
      Problem p = test::small_problem(seq, false);
      p.pass = pass;
      CaseResult c = test::ok_case("cudnn.sdpa", p, pass == Pass::fwd ? 1.0 : 3.0, 1e-4);
      c.case_id += std::string("/") + std::string(to_string(pass));
      set.cases.push_back(c);
    }
  FigureOptions o;
  o.out_dir = m_dir / "figures";
  o.link_prefix = "figures/";
  std::vector<std::string> notes;
  const auto figures = render_report_figures(set, o, notes);
  ASSERT_FALSE(figures.empty());
  EXPECT_EQ(figures[0].path, "figures/tflops_vs_seq_fp32_full.png");
  std::ifstream svg(m_dir / "figures" / "tflops_vs_seq_fp32_full.svg");
  const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("cudnn.sdpa bwd"), std::string::npos);
  EXPECT_NE(text.find("cudnn.sdpa fwd"), std::string::npos);
}

// NSA's compressed branch: Sk is the block count at S, so it follows the x axis (one panel for the
// branch, not one single-point panel per S), beside square windowed problems (the nsa preset).
TEST_F(ReportFigures, CompressedBranchSkFollowsTheAxis) {
  ResultSet set;
  ResultSource src;
  src.run = test::full_run();
  set.sources.push_back(src);
  for (const std::int64_t seq : {256, 512, 1024}) {
    Problem w = test::small_problem(seq, true);
    w.window = {64, 0};
    set.cases.push_back(test::ok_case("fa2.mma", w, 1.0, 1e-4));
    Problem c = test::small_problem(seq, false);
    c.compress = {32, 16};
    c.seq_kv = c.compress.blocks_at(seq - 1);
    set.cases.push_back(test::ok_case("fa2.mma", c, 1.0, 1e-4));
  }
  EXPECT_EQ(most_swept_axis(set.cases), "seq_kv");
  FigureOptions o;
  o.out_dir = m_dir / "figures";
  o.link_prefix = "figures/";
  std::vector<std::string> notes;
  const auto figures = links(render_report_figures(set, o, notes));
  EXPECT_EQ(figures,
            (std::vector<std::string>{"figures/tflops_vs_seq_kv_fp32_causal_win64_0.png",
                                      "figures/tflops_vs_seq_kv_fp32_cmp32_16.png", "figures/roofline.png"}));
}

}  // namespace
}  // namespace attn
