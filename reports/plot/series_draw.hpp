// The strokes a series is drawn with: marker shapes and dash patterns, shared by the plot area,
// the legend swatches and every renderer (they arrive as plain polylines, polygons and circles).
#pragma once
#include <vector>

#include "reports/plot/draw_list.hpp"
#include "reports/plot/plot_model.hpp"

namespace attn::plot {

// A marker of `shape` centred at `c` with radius `r` [px]: filled, or outlined `thickness` wide
// when `hollow`. Shapes are sized so they cover about the same area as the circle.
void draw_marker(DrawList& d, Vec2 c, float r, Marker shape, Color color, bool hollow, float thickness);

// An open polyline stroked with `dash`: solid is one polyline, a pattern becomes its "on" pieces
// (the pattern continues across vertices, so a dense curve keeps its dashes).
void stroke_dashed(DrawList& d, const std::vector<Vec2>& pts, Color color, float thickness, Dash dash);

}  // namespace attn::plot
