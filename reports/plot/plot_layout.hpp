// layout_plot(): the one place that decides where everything of a plot goes (margins, ticks,
// grid, series, bars, legend, titles) and emits it as a DrawList. The PNG exporter and the GUI's
// ImDrawList renderer both draw its output, so a PNG matches the screen.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "reports/plot/draw_list.hpp"
#include "reports/plot/plot_model.hpp"

namespace attn::plot {

// Sizes in [px] at scale 1 (an 800x500 figure); every size scales with `scale`.
struct Style {
  float scale = 1;
  float font_px = 14;        // tick labels, legend
  float title_px = 17;       // bold
  float axis_title_px = 15;  // axis titles
  float line_px = 2;         // series lines
  float marker_radius = 3.5f;
  float tick_length = 5;
  float min_tick_spacing_x = 70;  // between labelled x ticks (labels are wider than tall)
  float min_tick_spacing_y = 40;
  float pad = 10;  // outer padding
  Color background{255, 255, 255, 255};
  Color plot_background{255, 255, 255, 255};
  Color frame{40, 40, 40, 255};
  Color text{20, 20, 20, 255};
  Color muted_text{90, 90, 90, 255};
  Color grid_major{222, 222, 222, 255};
  Color grid_minor{240, 240, 240, 255};
  Color legend_background{255, 255, 255, 235};
  Color legend_border{190, 190, 190, 255};
  Color hidden_series{190, 190, 190, 255};
  float s(float v) const { return v * scale; }
};

// The default look at a given figure size: scale = min(width/800, height/500), at least 0.6.
Style default_style(int width, int height);

struct LegendItem {
  std::size_t series = 0;  // index into plot.series: clicking the item toggles its visibility
  Rect rect;               // hit box [px]
};

struct PlotLayout {
  DrawList draw;
  Rect plot_area;     // the data area [px]
  Viewport viewport;  // data <-> px inside plot_area
  std::vector<LegendItem> legend;
  Rect legend_box;  // empty (all zero) when there is no legend
};

// Lays `plot` out on a width x height canvas whose top-left is `origin` [px] (the GUI passes its
// child window's screen position; the PNG passes {0, 0}).
PlotLayout layout_plot(const Plot& plot, float width, float height, const TextMeasurer& fonts,
                       const Style& style, Vec2 origin = {0, 0});

// The hover crosshair for a hit from nearest_point: dashed guide lines through the point, a ring
// on it, and a label box "series: x, y" near it, appended to `draw` (the GUI calls this per frame).
void append_hover(DrawList& draw, const Plot& plot, const PlotLayout& layout, const PointHit& hit,
                  const TextMeasurer& fonts, const Style& style);

}  // namespace attn::plot
