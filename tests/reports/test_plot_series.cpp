// Series grouping, labels, styles, x ticks and unit scaling of build_plot(), and the roofline
// figure: the model-level checks behind issue 24's "figures a researcher can read".
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "reports/plot/font.hpp"
#include "reports/plot/plot_build.hpp"
#include "reports/plot/plot_facets.hpp"
#include "reports/plot/plot_layout.hpp"
#include "reports/plot/svg.hpp"
#include "reports/plot/units.hpp"
#include "reports/roofline_figure.hpp"
#include "tests/reports/golden.hpp"
#include "tests/reports/sample_results.hpp"

namespace attn::plot {
namespace {

std::vector<std::string> labels(const Plot& p) {
  std::vector<std::string> v;
  for (const Series& s : p.series) v.push_back(s.label);
  return v;
}

LoadedRun cpu_run(std::vector<CaseResult> cases) {
  LoadedRun r;
  r.run = test::full_run();
  r.run.backend = "cpu";
  r.run.gpu.reset();
  r.run.cpu_model = "Test CPU";
  r.cases = std::move(cases);
  return r;
}

Problem problem(std::int64_t seq, std::int64_t seq_kv, std::int64_t d, bool causal) {
  Problem p = test::small_problem(seq, causal);
  p.seq_kv = seq_kv;
  p.head_dim = p.head_dim_v = d;
  return p;
}

// The default CPU sweep's old defect: D=64 at S=128, 256 and D=128 at S=512, 1k share no x, so
// "varies at a fixed x" never split them and one line joined two sweeps.
TEST(PlotSeries, AxisConstantAtEachXButSharedBySeveralXSplitsTheSeries) {
  std::vector<CaseResult> cases;
  for (std::int64_t s : {128, 256})
    cases.push_back(test::ok_case("cpu.reference", problem(s, s, 64, true), 1, 0));
  for (std::int64_t s : {512, 1024})
    cases.push_back(test::ok_case("cpu.reference", problem(s, s, 128, true), 1, 0));
  PlotSpec spec;
  spec.x = "seq";
  const Plot p = build_plot({cpu_run(cases)}, spec);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"cpu.reference D=64", "cpu.reference D=128"}));
  EXPECT_EQ(p.series[0].x, (std::vector<double>{128, 256}));
  EXPECT_EQ(p.series[1].x, (std::vector<double>{512, 1024}));
  EXPECT_EQ(p.subtitle, "B=1, H=2, fp32, causal");  // D splits, so it is not "fixed"
}

TEST(PlotSeries, AnAxisThatFollowsXOneToOneStaysOneSeries) {
  // Sk = 2 Sq at every point: one sweep along x, not one series per Sk.
  std::vector<CaseResult> cases;
  for (std::int64_t s : {128, 256, 512})
    cases.push_back(test::ok_case("cpu.reference", problem(s, 2 * s, 32, false), 1, 0));
  PlotSpec spec;
  spec.x = "seq_q";
  const Plot p = build_plot({cpu_run(cases)}, spec);
  ASSERT_EQ(p.series.size(), 1u);
  EXPECT_EQ(p.series[0].x.size(), 3u);
}

TEST(PlotSeries, LabelsNameOnlyWhatDiffersBetweenSeries) {
  std::vector<CaseResult> cases;
  for (std::int64_t s : {128, 256})
    for (bool causal : {false, true}) {
      cases.push_back(test::ok_case("a.kernel", problem(s, s, 64, causal), 1, 0));
      cases.push_back(test::ok_case("b.kernel", problem(s, s, 64, causal), 2, 0));
    }
  PlotSpec spec;
  spec.group_by = {"dtype", "mask"};  // dtype is one value (fp32): out of the labels, into the subtitle
  const Plot p = build_plot({cpu_run(cases)}, spec);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"a.kernel causal", "a.kernel full", "b.kernel causal",
                                                 "b.kernel full"}));
  EXPECT_NE(p.subtitle.find("fp32"), std::string::npos) << p.subtitle;
}

TEST(PlotSeries, TwentyFourSeriesGetDistinctColourMarkerDashCombinations) {
  std::set<std::tuple<int, int, int, int, int>> seen;
  for (std::size_t i = 0; i < 24; ++i) {
    const SeriesStyle st = series_style(i);
    seen.insert({st.color.r, st.color.g, st.color.b, static_cast<int>(st.marker), static_cast<int>(st.dash)});
    if (i > 0) {  // neighbours in a legend differ in colour and in marker
      EXPECT_NE(st.color, series_style(i - 1).color) << i;
      EXPECT_NE(st.marker, series_style(i - 1).marker) << i;
    }
  }
  EXPECT_EQ(seen.size(), 24u);
  // The first eight are solid and all colours differ; the next eight are dashed.
  std::set<std::tuple<int, int, int>> colours;
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(series_style(i).dash, Dash::solid);
    colours.insert({series_style(i).color.r, series_style(i).color.g, series_style(i).color.b});
  }
  EXPECT_EQ(colours.size(), 8u);
  EXPECT_EQ(series_style(8).dash, Dash::dashed);
  EXPECT_EQ(series_style(16).dash, Dash::dotted);
  // Unique far beyond 24: 96 series before a triple repeats.
  std::set<std::tuple<std::size_t, int, int>> far;
  for (std::size_t i = 0; i < 96; ++i)
    far.insert(
        {i % kPaletteSize, static_cast<int>(series_style(i).marker), static_cast<int>(series_style(i).dash)});
  EXPECT_EQ(far.size(), 96u);
}

TEST(PlotSeries, BuildPlotStylesSeriesInOrder) {
  std::vector<CaseResult> cases;
  for (int k = 0; k < 12; ++k)
    for (std::int64_t s : {64, 128})
      cases.push_back(test::ok_case(fmt::format("k{}", k + 10), problem(s, s, 32, false), 1, 0));
  const Plot p = build_plot({cpu_run(cases)}, PlotSpec{});
  ASSERT_EQ(p.series.size(), 12u);
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    EXPECT_EQ(p.series[i].color, series_style(i).color);
    EXPECT_EQ(p.series[i].marker, series_style(i).marker);
    EXPECT_EQ(p.series[i].dash, series_style(i).dash);
  }
}

TEST(PlotSeries, LogXTicksSitAtTheSweptSizes) {
  std::vector<CaseResult> cases;
  for (std::int64_t s : {64, 128, 256, 512, 1024, 2048})
    cases.push_back(test::ok_case("cpu.reference", problem(s, s, 32, false), 1, 0));
  PlotSpec spec;
  spec.log_x = true;
  const Plot p = build_plot({cpu_run(cases)}, spec);
  EXPECT_EQ(p.x.data_ticks, (std::vector<double>{64, 128, 256, 512, 1024, 2048}));
  const PlotLayout l = layout_plot(p, 800, 500, TtfFont::builtin(), default_style(800, 500));
  std::vector<std::string> texts;  // the x tick labels: the row of text right under the plot area
  for (const DrawCmd& c : l.draw.cmds)
    if (const auto* t = std::get_if<DrawText>(&c);
        t && t->top_left.y > l.plot_area.y1 && t->top_left.y < l.plot_area.y1 + 20)
      texts.push_back(t->text);
  for (const char* want : {"64", "128", "256", "512", "1k", "2k"})
    EXPECT_NE(std::find(texts.begin(), texts.end(), want), texts.end()) << want;
  EXPECT_EQ(std::find(texts.begin(), texts.end(), "100"), texts.end());  // no 1-2-5 decade ticks
}

TEST(PlotSeries, ThroughputScalesToGflopsOnACpu) {
  std::vector<CaseResult> cases;
  for (std::int64_t s : {128, 256}) {
    CaseResult c = test::ok_case("cpu.reference", problem(s, s, 32, false), 1, 0);
    c.tflops = 0.005 * static_cast<double>(s) / 128;
    cases.push_back(c);
  }
  const Plot p = build_plot({cpu_run(cases)}, PlotSpec{});
  EXPECT_EQ(p.y.unit, "GFLOPS");
  ASSERT_EQ(p.series[0].y.size(), 2u);
  EXPECT_DOUBLE_EQ(p.series[0].y[0], 5);
  EXPECT_DOUBLE_EQ(p.series[0].y[1], 10);
  EXPECT_EQ(p.title, "Test CPU: GFLOPS vs sequence length");
}

TEST(PlotUnits, ScaledUnitTable) {
  EXPECT_EQ(scaled_unit("TFLOPS", 700).unit, "TFLOPS");
  EXPECT_EQ(scaled_unit("TFLOPS", 0.005).unit, "GFLOPS");
  EXPECT_EQ(scaled_unit("TFLOPS", 0.005).factor, 1e3);
  EXPECT_EQ(scaled_unit("TFLOPS", 2e-4).unit, "MFLOPS");
  EXPECT_EQ(scaled_unit("ms", 0.04).unit, "µs");
  EXPECT_EQ(scaled_unit("ms", 4e-4).unit, "ns");
  EXPECT_EQ(scaled_unit("ms", 12).unit, "ms");
  EXPECT_EQ(scaled_unit("ms", 2500).unit, "s");
  EXPECT_EQ(scaled_unit("GB/s", 0.5).unit, "MB/s");
  EXPECT_EQ(scaled_unit("B", 3.0 * 1024 * 1024).unit, "MiB");
  EXPECT_EQ(scaled_unit("%", 0.001).unit, "%");
  EXPECT_EQ(scaled_unit("TFLOPS", 0).factor, 1);
}

// A legend with 24 entries never sits on the data: it goes right of or below the plot area.
TEST(PlotSeries, CrowdedLegendGoesOutsideThePlotArea) {
  Plot p;
  p.x = {"Sequence length", "tokens", Scale::log10};
  p.y = {"Throughput", "TFLOPS"};
  for (std::size_t i = 0; i < 24; ++i) {
    Series s;
    s.label = "kernel.variant" + std::to_string(i) + " D=128 causal";
    s.x = {64, 128, 256, 512};
    s.y = {1.0 + static_cast<double>(i), 2.0 + static_cast<double>(i), 3.0 + static_cast<double>(i),
           4.0 + static_cast<double>(i)};
    s.set_style(series_style(i));
    p.series.push_back(s);
  }
  const PlotLayout l = layout_plot(p, 800, 500, TtfFont::builtin(), default_style(800, 500));
  const Rect& a = l.plot_area;
  const Rect& b = l.legend_box;
  ASSERT_GT(b.width(), 0);
  const bool overlaps = b.x0 < a.x1 && b.x1 > a.x0 && b.y0 < a.y1 && b.y1 > a.y0;
  EXPECT_FALSE(overlaps) << "legend " << b.x0 << "," << b.y0 << "-" << b.x1 << "," << b.y1;
  EXPECT_LE(b.y1, 500);
  EXPECT_EQ(l.legend.size(), 24u);
  EXPECT_GT(a.height(), 150);  // the data keeps most of the figure
}

// A marker per point while points are apart; on a dense curve (200 points across the plot) the
// markers that would merge into a blob are left out, but the line keeps every point.
TEST(PlotSeries, DenseLinesThinTheirMarkersButKeepEveryPoint) {
  auto square_markers = [](std::size_t points) {
    Plot p;
    p.x = {"Sequence length", "tokens"};
    p.y = {"Throughput", "TFLOPS"};
    Series s;
    s.label = "k";
    for (std::size_t i = 0; i < points; ++i) {
      s.x.push_back(static_cast<double>(i));
      s.y.push_back(1.0 + 0.01 * static_cast<double>(i));
    }
    s.set_style(series_style(1));
    s.marker = Marker::square;
    s.hollow = false;
    p.series.push_back(s);
    const PlotLayout l = layout_plot(p, 800, 500, TtfFont::builtin(), default_style(800, 500));
    std::size_t polygons = 0, line_points = 0;
    for (const DrawCmd& c : l.draw.cmds) {
      if (const auto* g = std::get_if<DrawPolygon>(&c); g && g->points.size() == 4) ++polygons;
      if (const auto* pl = std::get_if<DrawPolyline>(&c)) line_points += pl->points.size();
    }
    return std::pair{polygons, line_points};
  };
  const auto [sparse, sparse_line] = square_markers(6);
  EXPECT_GE(sparse, 6u);  // one per point (and the legend swatch's, if a legend is drawn)
  EXPECT_LE(sparse, 7u);
  EXPECT_GE(sparse_line, 6u);
  const auto [dense, dense_line] = square_markers(200);
  EXPECT_GT(dense, 20u);
  EXPECT_LT(dense, 120u);
  EXPECT_GE(dense_line, 200u);
}

// Kernel, D, mask and Sk all vary: one panel per D, the rest in the labels, styles kept per label.
TEST(PlotFacets, ManyVaryingAxesFacetOnePanelPerHeadDim) {
  std::vector<CaseResult> cases;
  for (const char* k : {"a.kernel", "b.kernel"})
    for (std::int64_t d : {64, 128})
      for (bool causal : {false, true})
        for (std::int64_t sk : {512, 1024})
          for (std::int64_t s : {128, 256})
            cases.push_back(test::ok_case(k, problem(s, sk, d, causal), 1, 0));
  PlotSpec spec;
  spec.x = "seq_q";
  const Figure f = build_figure({cpu_run(cases)}, spec);
  EXPECT_EQ(f.facet, "head_dim");
  ASSERT_EQ(f.panels.size(), 2u);
  EXPECT_EQ(f.panels[0].title, "D=64");
  EXPECT_EQ(f.panels[1].title, "D=128");
  ASSERT_EQ(f.panels[0].series.size(), 8u);
  for (const Series& s : f.panels[0].series) EXPECT_EQ(s.label.find("D="), std::string::npos) << s.label;
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(f.panels[0].series[i].label, f.panels[1].series[i].label);
    EXPECT_EQ(f.panels[0].series[i].color, f.panels[1].series[i].color);
    EXPECT_EQ(f.panels[0].series[i].marker, f.panels[1].series[i].marker);
  }
  EXPECT_NE(f.subtitle.find("one panel per Head dimension"), std::string::npos) << f.subtitle;
  // "none" keeps one plot; a named axis with one value is an error naming it.
  EXPECT_EQ(build_figure({cpu_run(cases)}, spec, "none").panels.size(), 1u);
  EXPECT_EQ(build_figure({cpu_run(cases)}, spec, "mask").panels.size(), 2u);
  try {
    build_figure({cpu_run(cases)}, spec, "batch");
    FAIL() << "batch has one value";
  } catch (const PlotSpecError& e) {
    EXPECT_NE(std::string(e.what()).find("--facet batch"), std::string::npos) << e.what();
  }
  const Image img = render_figure(f, 900, 500);
  EXPECT_EQ(img.width, 900);
}

TEST(PlotFacets, FewVaryingAxesStayOnePlot) {
  std::vector<CaseResult> cases;
  for (bool causal : {false, true})
    for (std::int64_t s : {128, 256})
      cases.push_back(test::ok_case("a.kernel", problem(s, s, 64, causal), 1, 0));
  const Figure f = build_figure({cpu_run(cases)}, PlotSpec{});
  EXPECT_TRUE(f.facet.empty());
  EXPECT_EQ(f.panels.size(), 1u);
}

// Two ridge points a few pixels apart (measured and datasheet DRAM): both labels inside the plot
// area and apart, as the H100 roofline needs.
TEST(PlotSeries, RidgeLabelsDoNotOverlap) {
  Plot p;
  p.x = {"Measured intensity", "FLOP/byte", Scale::log10};
  p.y = {"Throughput", "TFLOPS", Scale::log10};
  Series s;
  s.x = {10, 300};
  s.y = {30, 800};
  s.line = false;
  p.series.push_back(s);
  p.show_legend = false;
  p.annotations.push_back({262, 791, "measured DRAM ridge 262 FLOP/B"});
  p.annotations.push_back({295, 989, "datasheet DRAM ridge 295 FLOP/B"});
  const TtfFont& font = TtfFont::builtin();
  const PlotLayout l = layout_plot(p, 800, 500, font, default_style(800, 500));
  std::vector<Rect> boxes;
  for (const DrawCmd& c : l.draw.cmds)
    if (const auto* t = std::get_if<DrawText>(&c); t && t->text.find("ridge") != std::string::npos)
      boxes.push_back({t->top_left.x, t->top_left.y,
                       t->top_left.x + font.text_width(t->text, t->size_px, false),
                       t->top_left.y + t->size_px});
  ASSERT_EQ(boxes.size(), 2u);
  for (const Rect& b : boxes) {
    EXPECT_GE(b.x0, l.plot_area.x0);
    EXPECT_LE(b.x1, l.plot_area.x1);
    EXPECT_GE(b.y0, l.plot_area.y0);
    EXPECT_LE(b.y1, l.plot_area.y1);
  }
  const bool overlap = boxes[0].x0 < boxes[1].x1 && boxes[0].x1 > boxes[1].x0 && boxes[0].y0 < boxes[1].y1 &&
                       boxes[0].y1 > boxes[1].y0;
  EXPECT_FALSE(overlap);
}

// The SVG is the PNG's DrawList as vectors; pinned byte for byte.
TEST(PlotSvg, GoldenTwoSeriesPlot) {
  Plot p;
  p.title = "Test: TFLOPS vs sequence length";
  p.subtitle = "B=1, H=2, D=32";
  p.x = {"Sequence length", "tokens", Scale::log10};
  p.x.data_ticks = {128, 256, 512};
  p.y = {"Throughput", "TFLOPS"};
  for (std::size_t i = 0; i < 2; ++i) {
    Series s;
    s.label = i == 0 ? "a.kernel" : "b.kernel <&>";
    s.x = {128, 256, 512};
    s.y = {1.0 + static_cast<double>(i), 2.5, 4.0 - static_cast<double>(i)};
    s.set_style(series_style(i * 8 + 1));  // dashed, triangle
    p.series.push_back(s);
  }
  p.hlines.push_back({2, "reference = 2"});
  const std::string svg = render_plot_svg(p, 480, 300);
  EXPECT_NE(svg.find("&lt;&amp;&gt;"), std::string::npos);  // label text escaped
  EXPECT_NE(svg.find("<polygon"), std::string::npos);       // a triangle marker
  test::expect_golden("plot_two_series.svg", svg);
}

}  // namespace
}  // namespace attn::plot

namespace attn {
namespace {

CaseResult roof_case(const std::string& kernel, std::int64_t seq, double tflops, std::optional<double> dram) {
  CaseResult c = test::ok_case(kernel, test::small_problem(seq, false), 1, 0);
  c.tflops = tflops;
  if (dram) {
    c.metrics = CaseMetrics{};
    c.metrics->aggregate.dram_bytes = dram;
    c.metrics->aggregate.extra["lts__t_bytes.sum"] = *dram * 4;
  }
  return c;
}

TEST(RooflineFigure, MeasuredIntensityPointsAndLabelledRidges) {
  const RunInfo run = test::full_run();
  std::vector<CaseResult> cases{roof_case("fa2.mma", 128, 100, 1e6), roof_case("fa2.mma", 256, 200, 2e6)};
  const plot::Plot p = roofline_plot(cases, run);
  EXPECT_EQ(p.x.label, "Measured intensity");
  const plot::Series* k = nullptr;
  for (const plot::Series& s : p.series)
    if (s.kernel == "fa2.mma") k = &s;
  ASSERT_NE(k, nullptr);
  EXPECT_FALSE(k->line);  // points, not a false trend between cases
  EXPECT_DOUBLE_EQ(k->x[0], cases[0].flops / 1e6);
  EXPECT_EQ(k->case_ids[0], cases[0].case_id);
  ASSERT_FALSE(p.annotations.empty());
  EXPECT_NE(p.annotations[0].text.find("ridge"), std::string::npos);
  const double ridge = *run.peaks.tensor_tflops_measured * 1e3 / *run.peaks.dram_gbps_measured;
  EXPECT_DOUBLE_EQ(p.annotations[0].x, ridge);

  RooflineOptions algo;
  algo.intensity = RooflineIntensity::algorithmic;
  const plot::Plot a = roofline_plot(cases, run, algo);
  EXPECT_EQ(a.x.label, "Arithmetic intensity");
  for (const plot::Series& s : a.series) {
    if (s.kernel != "fa2.mma") continue;
    EXPECT_DOUBLE_EQ(s.x[0], cases[0].flops / static_cast<double>(cases[0].min_bytes));
  }
}

TEST(RooflineFigure, NoDramBytesFallsBackToAlgorithmicAndSaysSo) {
  const plot::Plot p =
      roofline_plot({roof_case("cpu.reference", 128, 0.004, std::nullopt)}, test::full_run());
  EXPECT_EQ(p.x.label, "Arithmetic intensity");
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes[0].find("algorithmic"), std::string::npos);
}

TEST(RooflineFigure, L2CeilingPlacesEachCaseAtItsL2IntensityToo) {
  RooflineOptions o;
  o.l2_gbps = 10000;
  const plot::Plot p = roofline_plot({roof_case("fa2.mma", 128, 100, 1e6)}, test::full_run(), o);
  bool l2_ceiling = false, l2_points = false;
  for (const plot::Series& s : p.series) {
    l2_ceiling = l2_ceiling || s.label.rfind("L2 ceiling", 0) == 0;
    if (s.hollow) {
      l2_points = true;
      EXPECT_EQ(s.label, "fa2.mma (L2)");
    }
  }
  EXPECT_TRUE(l2_ceiling);
  EXPECT_TRUE(l2_points);
  // Its ridge is labelled as well: DRAM (measured, datasheet) and L2.
  EXPECT_EQ(p.annotations.back().text.rfind("L2 ridge", 0), 0u) << p.annotations.back().text;
}

// Issue 24: the run's measured L2 bandwidth draws the L2 ceiling by default, and the default metric
// metrics.l2_bytes places the case at its L2 intensity; without either there is no L2 ceiling.
TEST(RooflineFigure, TheRunsMeasuredL2BandwidthDrawsTheL2CeilingByDefault) {
  RunInfo run = test::full_run();
  CaseResult c = roof_case("fa2.mma", 128, 100, 1e6);
  c.metrics->aggregate.extra.clear();
  c.metrics->aggregate.l2_bytes = 5e6;
  const plot::Plot without = roofline_plot({c}, run);
  for (const plot::Series& s : without.series) EXPECT_EQ(s.label.find("L2"), std::string::npos) << s.label;
  run.peaks.l2_gbps_measured = 9000;
  const plot::Plot p = roofline_plot({c}, run);
  const plot::Series* ceiling = nullptr;
  const plot::Series* hollow = nullptr;
  for (const plot::Series& s : p.series) {
    if (s.label.rfind("measured L2 ceiling", 0) == 0) ceiling = &s;
    if (s.hollow) hollow = &s;
  }
  ASSERT_NE(ceiling, nullptr);
  EXPECT_NE(ceiling->label.find("9000 GB/s"), std::string::npos) << ceiling->label;
  ASSERT_NE(hollow, nullptr);
  EXPECT_DOUBLE_EQ(hollow->x[0], c.flops / 5e6);
}

}  // namespace
}  // namespace attn
