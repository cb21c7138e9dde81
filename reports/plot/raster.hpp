// The PNG renderer: draws a DrawList into an RGBA image on the CPU (anti-aliased polylines,
// rects, circles, stb_truetype text) and encodes PNG with stb_image_write.
//
// Why a CPU rasteriser and not OSMesa: the binary must run unchanged on the GPU machines, which
// have no Mesa (nor any Debian library); a software path there would be needed anyway, and one
// renderer means one look and pixel tests that hold on every machine. A plot is a few thousand
// primitives, which this draws at 800x500 in a few milliseconds.
#pragma once
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "reports/plot/draw_list.hpp"
#include "reports/plot/font.hpp"
#include "reports/plot/plot_layout.hpp"

namespace attn::plot {

// Writing the PNG failed; names the path and the OS error.
class PlotIoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;  // width * height * 4, row-major, top row first
  Color at(int x, int y) const;
};

// Draws `draw` over a transparent-black canvas (layout_plot's first command fills the background).
Image rasterize(const DrawList& draw, int width, int height, const TtfFont& font);

// layout_plot + rasterize with the built-in font and default_style(width, height).
Image render_plot(const Plot& plot, int width, int height);

std::vector<std::uint8_t> encode_png(const Image& image);
void write_png(const Image& image, const std::filesystem::path& file);

// What render_plot draws with, for the CLI to say: "software rasteriser, embedded DejaVu Sans".
std::string renderer_description();

}  // namespace attn::plot
