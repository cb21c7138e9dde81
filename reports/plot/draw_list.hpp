// The drawing primitives a plot is made of, in pixel coordinates (y down): what layout_plot
// produces and what both renderers consume (the PNG rasteriser here, ImDrawList in the GUI), so
// the screen and the exported file draw the same shapes. Each maps onto one ImDrawList call.
#pragma once
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "reports/plot/plot_model.hpp"

namespace attn::plot {

// AddPolyline(points, color, 0, thickness): an open polyline with round joins; a plain line is
// a polyline of two points. Thickness [px].
struct DrawPolyline {
  std::vector<Vec2> points;
  Color color;
  float thickness = 1;
};

// AddRectFilled / AddRect(thickness).
struct DrawRect {
  Rect rect;
  Color color;
  bool filled = true;
  float thickness = 1;
};

// AddCircleFilled / AddCircle(thickness).
struct DrawCircle {
  Vec2 center;
  float radius = 3;
  Color color;
  bool filled = true;
  float thickness = 1;
};

// AddConvexPolyFilled(points, color): a filled convex polygon (triangle, square, diamond markers).
struct DrawPolygon {
  std::vector<Vec2> points;
  Color color;
};

// AddText(font, size_px, top_left, color, text). `size_px` is the font's pixel height as
// stb_truetype's ScaleForPixelHeight and ImGui's font size define it. Rotated text runs bottom to
// top (the y-axis title); `top_left` is then the top-left of its rotated (tall) bounding box.
struct DrawText {
  Vec2 top_left;
  std::string text;  // UTF-8
  Color color;
  float size_px = 14;
  bool bold = false;
  bool rotated = false;
};

// PushClipRect(rect, intersect) / PopClipRect(): series stay inside the plot area.
struct PushClip {
  Rect rect;
};
struct PopClip {};

using DrawCmd = std::variant<DrawPolyline, DrawRect, DrawCircle, DrawPolygon, DrawText, PushClip, PopClip>;

struct DrawList {
  std::vector<DrawCmd> cmds;
  void line(Vec2 a, Vec2 b, Color c, float thickness) {
    cmds.emplace_back(DrawPolyline{{a, b}, c, thickness});
  }
  void polyline(std::vector<Vec2> pts, Color c, float thickness) {
    cmds.emplace_back(DrawPolyline{std::move(pts), c, thickness});
  }
  void rect_filled(Rect r, Color c) { cmds.emplace_back(DrawRect{r, c, true, 1}); }
  void rect_outline(Rect r, Color c, float thickness) { cmds.emplace_back(DrawRect{r, c, false, thickness}); }
  void circle_filled(Vec2 center, float radius, Color c) {
    cmds.emplace_back(DrawCircle{center, radius, c, true, 1});
  }
  void polygon_filled(std::vector<Vec2> pts, Color c) { cmds.emplace_back(DrawPolygon{std::move(pts), c}); }
  void text(Vec2 top_left, std::string s, Color c, float size_px, bool bold = false, bool rotated = false) {
    cmds.emplace_back(DrawText{top_left, std::move(s), c, size_px, bold, rotated});
  }
  void push_clip(Rect r) { cmds.emplace_back(PushClip{r}); }
  void pop_clip() { cmds.emplace_back(PopClip{}); }
};

// Text measurement, from whichever font the renderer draws with (TtfFont for the PNG, ImFont's
// CalcTextSizeA in the GUI loaded from the same TTF at the same pixel size).
class TextMeasurer {
 public:
  virtual ~TextMeasurer() = default;
  // Advance width of `utf8` at pixel height `size_px` [px].
  virtual float text_width(std::string_view utf8, float size_px, bool bold) const = 0;
};

}  // namespace attn::plot
