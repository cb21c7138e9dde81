// Marker shapes as polygons and dash patterns as polyline pieces.
#include "reports/plot/series_draw.hpp"

#include <cmath>

namespace attn::plot {

namespace {

std::vector<Vec2> shape_points(Vec2 c, float r, Marker shape) {
  switch (shape) {
    case Marker::square: {
      const float h = r * 0.9f;
      return {{c.x - h, c.y - h}, {c.x + h, c.y - h}, {c.x + h, c.y + h}, {c.x - h, c.y + h}};
    }
    case Marker::triangle_up:
      return {{c.x, c.y - r * 1.3f}, {c.x + r * 1.15f, c.y + r * 0.7f}, {c.x - r * 1.15f, c.y + r * 0.7f}};
    case Marker::triangle_down:
      return {{c.x, c.y + r * 1.3f}, {c.x - r * 1.15f, c.y - r * 0.7f}, {c.x + r * 1.15f, c.y - r * 0.7f}};
    case Marker::diamond:
      return {{c.x, c.y - r * 1.3f}, {c.x + r * 1.3f, c.y}, {c.x, c.y + r * 1.3f}, {c.x - r * 1.3f, c.y}};
    case Marker::circle:
    case Marker::cross:
      break;
  }
  return {};
}

}  // namespace

void draw_marker(DrawList& d, Vec2 c, float r, Marker shape, Color color, bool hollow, float thickness) {
  if (shape == Marker::circle) {
    if (hollow)
      d.cmds.emplace_back(DrawCircle{c, r, color, false, thickness});
    else
      d.circle_filled(c, r, color);
    return;
  }
  if (shape == Marker::cross) {
    // An x needs a stroke to be seen: at least 40 % of the radius, whatever `thickness`.
    const float h = r * 1.1f, w = std::max(thickness, r * 0.55f);
    d.line({c.x - h, c.y - h}, {c.x + h, c.y + h}, color, w);
    d.line({c.x - h, c.y + h}, {c.x + h, c.y - h}, color, w);
    return;
  }
  std::vector<Vec2> pts = shape_points(c, r, shape);
  if (hollow) {
    pts.push_back(pts.front());
    d.polyline(std::move(pts), color, thickness);
  } else {
    d.polygon_filled(std::move(pts), color);
  }
}

void stroke_dashed(DrawList& d, const std::vector<Vec2>& pts, Color color, float thickness, Dash dash) {
  if (pts.size() < 2) return;
  const std::vector<float> pattern = dash_pattern(dash);
  if (pattern.empty()) {
    d.polyline(pts, color, thickness);
    return;
  }
  std::size_t phase = 0;                // index into pattern; even = on
  float left = pattern[0] * thickness;  // [px] left in the current phase
  std::vector<Vec2> piece{pts[0]};
  for (std::size_t i = 1; i < pts.size(); ++i) {
    Vec2 a = pts[i - 1];
    const Vec2 b = pts[i];
    float seg = std::hypot(b.x - a.x, b.y - a.y);
    while (seg > 0) {
      const float step = std::min(seg, left);
      const float t = step / seg;
      const Vec2 m{a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t};
      if (phase % 2 == 0) piece.push_back(m);
      a = m;
      seg -= step;
      left -= step;
      if (left <= 1e-4f) {
        if (phase % 2 == 0 && piece.size() >= 2) d.polyline(piece, color, thickness);
        piece.clear();
        phase = (phase + 1) % pattern.size();
        left = pattern[phase] * thickness;
        if (phase % 2 == 0) piece.push_back(a);
      }
    }
  }
  if (phase % 2 == 0 && piece.size() >= 2) d.polyline(piece, color, thickness);
}

}  // namespace attn::plot
