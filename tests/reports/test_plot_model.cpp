// The plot model's arithmetic: nice ticks (linear and log10) and their labels, fitted ranges,
// the Viewport transform with zoom/pan/fit, grouped bar slots and the hover's nearest point.
#include <gtest/gtest.h>

#include <cmath>

#include "reports/plot/plot_model.hpp"

namespace attn::plot {
namespace {

std::vector<double> major_values(const std::vector<Tick>& ticks) {
  std::vector<double> v;
  for (const Tick& t : ticks)
    if (t.major) v.push_back(t.value);
  return v;
}
std::vector<std::string> major_labels(const std::vector<Tick>& ticks) {
  std::vector<std::string> v;
  for (const Tick& t : ticks)
    if (t.major) v.push_back(t.label);
  return v;
}
void expect_values(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-9 * std::max(1.0, std::fabs(want[i])));
}

TEST(PlotTicks, LinearOneTwoFiveSteps) {
  const auto a = nice_ticks(0, 100, Scale::linear, 500, 50);  // >= 10 per 50 px -> step 10
  expect_values(major_values(a), {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100});
  const auto b = nice_ticks(0, 1, Scale::linear, 300, 60);  // >= 0.2 -> step 0.2
  EXPECT_EQ(major_labels(b), (std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"}));
  const auto c = nice_ticks(-3.7, 12.2, Scale::linear, 400, 80);  // >= 3.18 -> step 5
  expect_values(major_values(c), {0, 5, 10});
  const auto d = nice_ticks(0, 20000, Scale::linear, 600, 100);  // >= 3333 -> step 5000
  EXPECT_EQ(major_labels(d), (std::vector<std::string>{"0", "5k", "10k", "15k", "20k"}));
  const auto e = nice_ticks(0, 0.007, Scale::linear, 350, 50);  // >= 0.001
  EXPECT_EQ(major_labels(e),
            (std::vector<std::string>{"0", "0.001", "0.002", "0.003", "0.004", "0.005", "0.006", "0.007"}));
  for (const Tick& t : a) EXPECT_TRUE(t.major);
}

TEST(PlotTicks, Log10DecadesWithTwoFiveWhenRoomy) {
  // 100 px per decade: decades labelled, 2..9 as unlabelled minor ticks.
  const auto a = nice_ticks(1, 1000, Scale::log10, 300, 40);
  EXPECT_EQ(major_labels(a), (std::vector<std::string>{"1", "10", "100", "1k"}));
  EXPECT_EQ(a.size(), 4u + 3u * 8u);
  for (const Tick& t : a)
    if (!t.major) {
      EXPECT_TRUE(t.label.empty());
    }
  // 200 px per decade: 1, 2, 5 labelled.
  const auto b = nice_ticks(1, 1000, Scale::log10, 600, 40);
  EXPECT_EQ(major_labels(b),
            (std::vector<std::string>{"1", "2", "5", "10", "20", "50", "100", "200", "500", "1k"}));
}

TEST(PlotTicks, Log10SkipsDecadesWhenDense) {
  // 25 px per decade with 40 px spacing: every 2nd decade.
  const auto a = nice_ticks(1e-4, 1e4, Scale::log10, 200, 40);
  EXPECT_EQ(major_labels(a), (std::vector<std::string>{"1e-4", "0.01", "1", "100", "10k"}));
}

TEST(PlotTicks, Log10NarrowerThanADecadeFallsBackToLinearSteps) {
  const auto a = nice_ticks(3, 8, Scale::log10, 300, 40);
  expect_values(major_values(a), {3, 4, 5, 6, 7, 8});
  EXPECT_TRUE(nice_ticks(0, 10, Scale::log10, 300, 40).empty());  // no log axis through 0
  EXPECT_TRUE(nice_ticks(5, 5, Scale::linear, 300, 40).empty());
}

TEST(PlotTicks, CompactLabels) {
  EXPECT_EQ(format_tick(16384, 0), "16k");
  EXPECT_EQ(format_tick(65536, 0), "64k");
  EXPECT_EQ(format_tick(1024, 0), "1k");
  EXPECT_EQ(format_tick(512, 0), "512");
  EXPECT_EQ(format_tick(1500, 500), "1.5k");
  EXPECT_EQ(format_tick(2e6, 1e6), "2M");
  EXPECT_EQ(format_tick(1048576, 0), "1M");
  EXPECT_EQ(format_tick(0.5, 0.1), "0.5");
  EXPECT_EQ(format_tick(0.25, 0.05), "0.25");
  EXPECT_EQ(format_tick(0.001, 0.001), "0.001");
  EXPECT_EQ(format_tick(1e-3 / 4, 1e-5), "2.5e-4");
  EXPECT_EQ(format_tick(1e-6, 1e-6), "1e-6");
  EXPECT_EQ(format_tick(1e-17, 0.1), "0");
  EXPECT_EQ(format_tick(-20, 10), "-20");
  EXPECT_EQ(nice_step_at_least(3.18), 5);
  EXPECT_EQ(nice_step_at_least(0.11), 0.2);
  EXPECT_EQ(nice_step_at_least(1000), 1000);
}

TEST(PlotPalette, FixedDistinctColoursInOrder) {
  EXPECT_EQ(palette_color(0), (Color{0, 114, 178, 255}));  // Okabe-Ito blue
  EXPECT_EQ(palette_color(1), (Color{213, 94, 0, 255}));   // Okabe-Ito vermillion
  EXPECT_EQ(palette_color(kPaletteSize), palette_color(0));
  for (std::size_t i = 0; i < kPaletteSize; ++i)
    for (std::size_t j = i + 1; j < kPaletteSize; ++j) {
      const Color a = palette_color(i), b = palette_color(j);
      EXPECT_GT(std::abs(a.r - b.r) + std::abs(a.g - b.g) + std::abs(a.b - b.b), 60) << i << " vs " << j;
    }
}

Plot two_series() {
  Plot p;
  p.series.push_back({"a", {1, 2, 4}, {10, 20, 40}, palette_color(0), true, "ka"});
  p.series.push_back({"b", {1, 2, 4}, {5, 50, 20}, palette_color(1), true, "kb"});
  return p;
}

TEST(PlotFit, PaddedRangesStartLinearYAtZero) {
  Plot p = two_series();
  const Range x = fit_x(p, 0.05);
  EXPECT_NEAR(x.min, 1 - 0.15, 1e-12);
  EXPECT_NEAR(x.max, 4 + 0.15, 1e-12);
  const Range y = fit_y(p, 0.1);
  EXPECT_EQ(y.min, 0);
  EXPECT_NEAR(y.max, 55, 1e-12);
  p.y.scale = Scale::log10;  // log: padded by a fraction of the decades, never to 0
  const Range ly = fit_y(p, 0.1);
  EXPECT_NEAR(std::log10(ly.min), std::log10(5) - 0.1, 1e-12);
  EXPECT_NEAR(std::log10(ly.max), std::log10(50) + 0.1, 1e-12);
  p.series[1].visible = false;  // hidden series do not count
  p.y.scale = Scale::linear;
  EXPECT_NEAR(fit_y(p, 0.1).max, 44, 1e-12);
  p.hlines.push_back({100, "ref", {}});  // reference lines do
  EXPECT_NEAR(fit_y(p, 0.1).max, 110, 1e-12);
  Plot bars = two_series();
  bars.kind = PlotKind::bars;
  bars.x.categories = {"64", "128", "256", "512", "1k"};
  EXPECT_EQ(fit_x(bars), (Range{-0.5, 4.5}));
}

TEST(PlotViewport, TransformsRoundTrip) {
  const Viewport v{{100, 50, 700, 450}, {0, 10}, {1, 1000}, Scale::linear, Scale::log10};
  EXPECT_DOUBLE_EQ(v.to_px_x(5), 400);
  EXPECT_DOUBLE_EQ(v.to_px_x(0), 100);
  EXPECT_NEAR(v.to_px_y(10), 450 - 400.0 / 3, 1e-9);
  EXPECT_NEAR(v.to_px_y(1000), 50, 1e-9);
  EXPECT_TRUE(std::isnan(v.to_px_y(0)));  // nothing <= 0 on a log axis
  for (double x : {0.0, 1.5, 7.25, 10.0}) EXPECT_NEAR(v.from_px_x(v.to_px_x(x)), x, 1e-9);
  for (double y : {1.0, 3.3, 42.0, 999.0}) EXPECT_NEAR(v.from_px_y(v.to_px_y(y)), y, 1e-9 * y);
  for (double px : {100.0, 333.0, 700.0}) EXPECT_NEAR(v.to_px_x(v.from_px_x(px)), px, 1e-9);
}

TEST(PlotViewport, ZoomKeepsTheCursorPointAndPanFollowsTheDrag) {
  const Viewport v{{100, 50, 700, 450}, {0, 10}, {1, 1000}, Scale::linear, Scale::log10};
  const Viewport z = zoom(v, 400, 250, 2.0);  // centre: x = 5, y = 10^1.5
  EXPECT_NEAR(z.x.min, 2.5, 1e-12);
  EXPECT_NEAR(z.x.max, 7.5, 1e-12);
  EXPECT_NEAR(std::log10(z.y.min), 0.75, 1e-12);
  EXPECT_NEAR(std::log10(z.y.max), 2.25, 1e-12);
  const Viewport off = zoom(v, 160, 130, 1.7);  // an off-centre point stays under the cursor
  EXPECT_NEAR(off.from_px_x(160), v.from_px_x(160), 1e-9);
  EXPECT_NEAR(off.from_px_y(130), v.from_px_y(130), 1e-9);
  const Viewport only_x = zoom(v, 400, 250, 2.0, AxisMask::x);
  EXPECT_EQ(only_x.y, v.y);
  const Viewport p = pan(v, 60, -40);  // drag right by 1/10 and up by 1/10
  EXPECT_NEAR(p.x.min, -1, 1e-12);
  EXPECT_NEAR(p.x.max, 9, 1e-12);
  EXPECT_NEAR(std::log10(p.y.min), -0.3, 1e-12);
  EXPECT_NEAR(std::log10(p.y.max), 2.7, 1e-12);
  EXPECT_NEAR(p.to_px_x(v.from_px_x(300)), 360, 1e-9);  // the dragged point moved with the mouse

  Plot plot = two_series();
  const Viewport fitted = fit(z, plot);
  EXPECT_EQ(fitted.x, fit_x(plot));
  EXPECT_EQ(fitted.y, fit_y(plot));
  apply_view(plot, z);
  EXPECT_FALSE(plot.x.auto_fit);
  EXPECT_EQ(shown_x(plot), z.x);
  reset_view(plot);
  EXPECT_EQ(shown_x(plot), fit_x(plot));
}

TEST(PlotHover, NearestVisiblePointWithinReach) {
  Plot plot = two_series();
  const Viewport v{{0, 0, 300, 100}, {0, 4}, {0, 100}, Scale::linear, Scale::linear};
  // b's (2, 50) sits at px (150, 50).
  auto hit = nearest_point(plot, v, 152, 47, 10);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->series, 1u);
  EXPECT_EQ(hit->index, 1u);
  EXPECT_EQ(hit->x, 2);
  EXPECT_EQ(hit->y, 50);
  EXPECT_NEAR(hit->distance_px, std::hypot(2, 3), 1e-9);
  EXPECT_FALSE(nearest_point(plot, v, 152, 47, 3));  // out of reach
  plot.series[1].visible = false;                    // hidden series are not hovered
  hit = nearest_point(plot, v, 152, 47, 1000);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->series, 0u);
}

TEST(PlotBars, SlotsShareTheGroupAmongVisibleSeries) {
  Plot plot = two_series();
  plot.kind = PlotKind::bars;
  EXPECT_NEAR(bar_slot(plot, 0).offset, -0.2, 1e-12);
  EXPECT_NEAR(bar_slot(plot, 1).offset, 0.2, 1e-12);
  EXPECT_NEAR(bar_slot(plot, 1).width, 0.4, 1e-12);
  plot.series[0].visible = false;
  EXPECT_EQ(bar_slot(plot, 0).width, 0);
  EXPECT_NEAR(bar_slot(plot, 1).offset, 0, 1e-12);
  EXPECT_NEAR(bar_slot(plot, 1).width, 0.8, 1e-12);
}

TEST(PlotAxis, TitleCarriesTheUnit) {
  Axis a;
  a.label = "Sequence length";
  a.unit = "tokens";
  EXPECT_EQ(a.title(), "Sequence length [tokens]");
  a.unit.clear();
  EXPECT_EQ(a.title(), "Sequence length");
}

}  // namespace
}  // namespace attn::plot
