// The SVG renderer: the same DrawList the PNG rasteriser draws, written as SVG elements, so a
// paper gets vectors that match the PNG (text placed and stretched to the widths layout measured).
#pragma once
#include <filesystem>
#include <string>

#include "reports/plot/draw_list.hpp"
#include "reports/plot/font.hpp"
#include "reports/plot/plot_model.hpp"

namespace attn::plot {

// An SVG document of `draw` on a width x height canvas [px]; text in DejaVu Sans at the sizes the
// raster uses, each string stretched to the width `font` measures (textLength).
std::string svg_document(const DrawList& draw, int width, int height, const TtfFont& font);

// layout_plot + svg_document with the built-in font and default_style(width, height).
std::string render_plot_svg(const Plot& plot, int width, int height);

// Writes `svg` to `file`; throws PlotIoError naming the path and the OS error.
void write_svg(const std::string& svg, const std::filesystem::path& file);

}  // namespace attn::plot
