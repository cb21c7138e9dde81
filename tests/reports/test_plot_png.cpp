// The headless PNG renderer: a 3-series plot at 800x500 decoded back with stb_image has the right
// size, is not blank, and shows every series' palette colour; the rasteriser's primitives, clip
// and the legend toggle; and `attnscope plot` end to end on a synthetic results file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <set>

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

#include "plot_fixture.hpp"
#include "reports/plot/plot_build.hpp"
#include "reports/plot/raster.hpp"
#include "tests/support/cli_process.hpp"

namespace attn::plot {
namespace {

namespace fs = std::filesystem;

Image decode(const std::vector<std::uint8_t>& png) {
  int w = 0, h = 0, n = 0;
  unsigned char* data = stbi_load_from_memory(png.data(), static_cast<int>(png.size()), &w, &h, &n, 4);
  Image img;
  if (!data) return img;
  img.width = w;
  img.height = h;
  img.rgba.assign(data, data + static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4);
  stbi_image_free(data);
  return img;
}

Image load(const fs::path& file) {
  int w = 0, h = 0, n = 0;
  unsigned char* data = stbi_load(file.string().c_str(), &w, &h, &n, 4);
  Image img;
  if (!data) return img;
  img.width = w;
  img.height = h;
  img.rgba.assign(data, data + static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4);
  stbi_image_free(data);
  return img;
}

std::size_t count_colour(const Image& img, Color c) {
  std::size_t n = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) n += img.at(x, y) == c;
  return n;
}

Plot three_series() {
  Plot p;
  p.title = "Throughput vs sequence length";
  p.subtitle = "B=1, H=16, D=128, fp16";
  p.x = {"Sequence length", "tokens", Scale::log10};
  p.y = {"Throughput", "TFLOPS", Scale::linear};
  p.x.data_ticks = {512, 1024, 2048, 4096, 8192, 16384};
  const std::vector<double> x{512, 1024, 2048, 4096, 8192, 16384};
  p.series.push_back({"cudnn.sdpa", x, {210, 340, 450, 520, 560, 575}, palette_color(0), true, "cudnn.sdpa"});
  p.series.push_back({"fa2.mma", x, {180, 300, 410, 480, 505, 515}, palette_color(1), true, "fa2.mma"});
  p.series.push_back({"naive.unfused", x, {40, 55, 60, 62, 63, 63}, palette_color(2), true, "naive.unfused"});
  return p;
}

TEST(PlotPng, ThreeSeriesAt800x500ShowEveryPaletteColour) {
  const Plot p = three_series();
  const Image img = decode(encode_png(render_plot(p, 800, 500)));
  ASSERT_EQ(img.width, 800);
  ASSERT_EQ(img.height, 500);
  std::set<std::uint32_t> distinct;
  for (std::size_t i = 0; i < img.rgba.size(); i += 4)
    distinct.insert(static_cast<std::uint32_t>(img.rgba[i]) << 16 |
                    static_cast<std::uint32_t>(img.rgba[i + 1]) << 8 | img.rgba[i + 2]);
  EXPECT_GT(distinct.size(), 200u);                      // anti-aliased lines and text, not a flat fill
  EXPECT_EQ(img.at(0, 0), (Color{255, 255, 255, 255}));  // opaque white background
  // Inside the plot area many pixels are not background.
  const TtfFont& font = TtfFont::builtin();
  const PlotLayout layout = layout_plot(p, 800, 500, font, default_style(800, 500));
  std::size_t inked = 0, area = 0;
  for (int y = static_cast<int>(layout.plot_area.y0) + 2; y < static_cast<int>(layout.plot_area.y1) - 2; ++y)
    for (int x = static_cast<int>(layout.plot_area.x0) + 2; x < static_cast<int>(layout.plot_area.x1) - 2;
         ++x) {
      ++area;
      inked += !(img.at(x, y) == Color{255, 255, 255, 255});
    }
  EXPECT_GT(inked, area / 50) << inked << " of " << area;
  for (std::size_t i = 0; i < 3; ++i) EXPECT_GT(count_colour(img, palette_color(i)), 100u) << "series " << i;
  EXPECT_EQ(count_colour(img, palette_color(3)), 0u);  // no 4th series, no 4th colour
  EXPECT_EQ(layout.legend.size(), 3u);
}

TEST(PlotPng, HiddenSeriesLeaveThePictureAndGreyInTheLegend) {
  Plot p = three_series();
  p.series[1].visible = false;
  const Image img = render_plot(p, 800, 500);
  EXPECT_EQ(count_colour(img, palette_color(1)), 0u);
  EXPECT_GT(count_colour(img, palette_color(0)), 100u);
  EXPECT_GT(count_colour(img, default_style(800, 500).hidden_series), 10u);
}

TEST(PlotPng, WideTitleStaysInsideTheImage) {
  // A long title over a plot area narrowed by the legend: centring over the area alone would start
  // it left of the image (the seed-000 speedup figures' titles did).
  Plot p = three_series();
  p.title = "NVIDIA H100 80GB HBM3: speedup over torch.efficient vs head dimension, every variant";
  const TtfFont& font = TtfFont::builtin();
  const float width = 800;
  const PlotLayout layout = layout_plot(p, width, 500, font, default_style(800, 500));
  bool found = false;
  for (const DrawCmd& cmd : layout.draw.cmds)
    if (const auto* t = std::get_if<DrawText>(&cmd); t && t->text == p.title) {
      found = true;
      EXPECT_GE(t->top_left.x, 0.0f);
      EXPECT_LE(t->top_left.x + font.text_width(p.title, t->size_px, true), width);
    }
  EXPECT_TRUE(found);
}

TEST(PlotPng, GroupedBarsFillTheirSlots) {
  Plot p = three_series();
  p.kind = PlotKind::bars;
  p.x = {"Sequence length", "tokens", Scale::linear};
  p.x.categories = {"512", "1k", "2k", "4k", "8k", "16k"};
  for (Series& s : p.series) s.x = {0, 1, 2, 3, 4, 5};
  const TtfFont& font = TtfFont::builtin();
  const PlotLayout layout = layout_plot(p, 800, 500, font, default_style(800, 500));
  const Image img = rasterize(layout.draw, 800, 500, font);
  // The middle of series 1's bar at category 3 (y = 480) is its colour.
  const BarSlot slot = bar_slot(p, 1);
  const int x = static_cast<int>(layout.viewport.to_px_x(3 + slot.offset));
  const int y = static_cast<int>(layout.viewport.to_px_y(240));
  EXPECT_EQ(img.at(x, y), palette_color(1));
}

TEST(PlotRaster, PrimitivesClipAndText) {
  DrawList d;
  d.rect_filled({0, 0, 100, 60}, {255, 255, 255, 255});
  d.rect_filled({10, 10, 30, 30}, {200, 0, 0, 255});
  d.push_clip({50, 0, 100, 60});
  d.line({40, 45}, {95, 45}, {0, 0, 200, 255}, 3);  // the part left of x = 50 is clipped
  d.pop_clip();
  d.circle_filled({80, 20}, 6, {0, 150, 0, 255});
  const Image img = rasterize(d, 100, 60, TtfFont::builtin());
  EXPECT_EQ(img.at(20, 20), (Color{200, 0, 0, 255}));
  EXPECT_EQ(img.at(35, 20), (Color{255, 255, 255, 255}));
  EXPECT_EQ(img.at(70, 44), (Color{0, 0, 200, 255}));
  EXPECT_EQ(img.at(45, 44), (Color{255, 255, 255, 255}));  // clipped away
  EXPECT_EQ(img.at(80, 20), (Color{0, 150, 0, 255}));
  EXPECT_EQ(img.at(80, 29), (Color{255, 255, 255, 255}));  // outside the radius

  DrawList t;
  t.rect_filled({0, 0, 100, 60}, {255, 255, 255, 255});
  t.text({5, 5}, "16k", {0, 0, 0, 255}, 20);
  const Image ti = rasterize(t, 100, 60, TtfFont::builtin());
  std::size_t dark = 0;
  for (int y = 0; y < 60; ++y)
    for (int x = 0; x < 100; ++x) dark += ti.at(x, y).r < 128 ? 1 : 0;
  EXPECT_GT(dark, 40u);
  const float w = TtfFont::builtin().text_width("16k", 20, false);
  EXPECT_GT(w, 25);
  EXPECT_LT(w, 45);
  for (int y = 0; y < 60; ++y)
    EXPECT_GT(ti.at(static_cast<int>(w) + 9, y).r, 200) << y;  // nothing past the advance
}

TEST(PlotCli, WritesTheSeedNamedPngFromARunDirectory) {
  const fs::path dir = fs::path(::testing::TempDir()) / "attnscope_plot_cli";
  test::write_plot_fixture(dir / "run");
  const fs::path out = dir / "png";
  fs::create_directories(out);
  CliOutcome o = run_cli("plot " + (dir / "run").string() + " --x seq --y speedup -o " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const fs::path file = out / "NVIDIA_H100_80GB_HBM3_fa2.mma_Speedup.png";
  EXPECT_NE(o.output.find("wrote " + file.string() + " (800x500, 2 series; software rasteriser"),
            std::string::npos)
      << o.output;
  const Image img = load(file);
  EXPECT_EQ(img.width, 800);
  EXPECT_EQ(img.height, 500);
  EXPECT_GT(count_colour(img, palette_color(0)), 100u);
  EXPECT_GT(count_colour(img, palette_color(1)), 100u);

  o = run_cli("plot " + (dir / "run" / "results.jsonl").string() +
              " --x seq --y tflops --log-x --size 640x400 -o " + (out / "t.png").string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("note: 1 cases not ok are not plotted (1 skipped)"), std::string::npos) << o.output;
  const Image t = load(out / "t.png");
  EXPECT_EQ(t.width, 640);
  EXPECT_EQ(t.height, 400);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_GT(count_colour(t, palette_color(i)), 50u) << i;
}

TEST(PlotCli, KernelsAndWhereFilterTheSeries) {
  const fs::path dir = fs::path(::testing::TempDir()) / "attnscope_plot_cli_filter";
  test::write_plot_fixture(dir / "run");
  const std::string run = (dir / "run").string();
  CliOutcome o =
      run_cli("plot " + run + " --x seq --kernels fa2.mma,cudnn.sdpa --where causal=1 --where seq=128" +
              " --where seq=512 -o " + (dir / "f.png").string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("(800x500, 2 series;"), std::string::npos) << o.output;
  const Image img = load(dir / "f.png");
  EXPECT_GT(count_colour(img, palette_color(0)), 50u);
  EXPECT_GT(count_colour(img, palette_color(1)), 50u);
  EXPECT_EQ(count_colour(img, palette_color(2)), 0u);  // the non-causal series are filtered out

  o = run_cli("plot " + run + " --kernels fa2.mma,fa3.wgmma -o " + (dir / "g.png").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("--kernels fa3.wgmma: no case of that kernel in these results; kernels there: "
                          "cudnn.sdpa, fa2.mma"),
            std::string::npos)
      << o.output;
  o = run_cli("plot " + run + " --where head_dim=128 -o " + (dir / "g.png").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(
      o.output.find("--where head_dim=128: no case in these results has head_dim 128; values there: 32"),
      std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(dir / "g.png"));
}

TEST(PlotCli, BadInputExitsTwoNamingTheFlag) {
  const fs::path dir = fs::path(::testing::TempDir()) / "attnscope_plot_cli_bad";
  const std::string results = test::write_plot_fixture(dir / "run").string();
  const std::string out = " -o " + (dir / "x.png").string();
  CliOutcome o = run_cli("plot " + results + " --x sequence" + out);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("--x sequence: unknown axis; allowed: batch, tokens"), std::string::npos)
      << o.output;
  o = run_cli("plot " + results + " --size 10x10" + out);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("--size 10x10: 10 is out of range; expected WxH"), std::string::npos) << o.output;
  o = run_cli("plot " + results + " --kind pie" + out);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("--kind"), std::string::npos) << o.output;
  o = run_cli("plot " + results + " --y speedup --baseline fa3.wgmma" + out);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("--baseline fa3.wgmma: no ok case"), std::string::npos) << o.output;
  o = run_cli("plot " + (dir / "missing").string() + out);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("no such file"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(dir / "x.png"));
}

}  // namespace
}  // namespace attn::plot
