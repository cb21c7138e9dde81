// The on-screen plot: draws the shared plot::DrawList (reports/plot/plot_layout) with ImDrawList,
// so the screen and the PNG export come from one layout, and adds the interaction: hover
// crosshair with the nearest point, legend toggles, wheel zoom, drag pan, double-click fit, click
// to select. Also the fonts (DejaVu Sans at the plot's pixel sizes) that both text and
// measurement use.
#pragma once
#include <imgui.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/plot/draw_list.hpp"
#include "reports/plot/plot_layout.hpp"
#include "reports/plot/plot_model.hpp"

namespace attn::gui {

// The UI and plot fonts, loaded into ImGui's atlas at exact pixel sizes so text is crisp at any
// DPI; text is drawn and measured at the loaded size nearest the requested one.
class GuiFonts final : public plot::TextMeasurer {
 public:
  // Before the atlas is built. `scale` = the window's content scale (1 on a 96-dpi screen).
  void load(ImGuiIO& io, float scale);
  ImFont* ui() const { return m_ui; }
  ImFont* ui_bold() const { return m_ui_bold; }
  ImFont* large() const { return m_large; }
  // The loaded face nearest `size_px` (bold when available), and its pixel size.
  std::pair<ImFont*, float> pick(float size_px, bool bold) const;
  float text_width(std::string_view utf8, float size_px, bool bold) const override;
  float scale() const { return m_scale; }
  // "DejaVu Sans (embedded)" or "ImGui default (no TTF found)".
  const std::string& description() const { return m_description; }

 private:
  struct Face {
    float size = 0;
    bool bold = false;
    ImFont* font = nullptr;
  };
  std::vector<Face> m_faces;
  ImFont* m_ui = nullptr;
  ImFont* m_ui_bold = nullptr;
  ImFont* m_large = nullptr;
  float m_scale = 1;
  std::string m_description;
};

inline ImU32 to_imgui(plot::Color c) { return IM_COL32(c.r, c.g, c.b, c.a); }

// Draws every command of `draw` shifted by `offset` [px]. Filled rectangles of colour `skip_fill`
// are left out (the panel behind already has that colour).
void render_draw_list(ImDrawList* dl, const plot::DrawList& draw, const GuiFonts& fonts, ImVec2 offset,
                      std::optional<plot::Color> skip_fill = std::nullopt);

// The plot style on screen: the PNG's default look at the window's content scale.
plot::Style screen_style(const GuiFonts& fonts);

class PlotTexture;  // offscreen.hpp

// One interactive plot on screen: the model plus view state that survives rebuilds.
struct PlotWidget {
  plot::Plot plot;
  std::uint64_t revision = 1;  // bumped whenever `plot` changes; the layout is cached on it
  plot::PlotLayout layout;
  std::uint64_t layout_revision = 0;
  ImVec2 layout_size{0, 0};
  bool dragging = false;
  bool drag_moved = false;
  std::optional<plot::PointHit> hover;
  bool has_plot = false;
  std::string message;  // shown instead of a plot (nothing to plot, or why not)
  // The laid-out plot rendered once into a texture; re-rendered when the layout changes.
  std::shared_ptr<PlotTexture> texture;
  std::uint64_t texture_revision = 0;
  ImVec2 texture_size{0, 0};
  bool texture_ok = false;
};

// Replaces the model with freshly built data, keeping the user's zoom and the legend toggles (by
// series label).
void update_plot(PlotWidget& w, plot::Plot fresh);

struct PlotEvents {
  std::optional<plot::PointHit> clicked;  // a point clicked (not dragged)
  std::optional<plot::PointHit> hovered;
  ImVec2 origin{0, 0};   // screen position of the widget's top-left
  plot::Rect plot_area;  // screen rectangle of the data area
};

// Draws the plot filling `size` at the cursor, with the interaction. `highlight` rings a point
// (the selected case) as (series, index).
PlotEvents plot_widget(const char* id, PlotWidget& w, const GuiFonts& fonts, ImVec2 size,
                       std::optional<std::pair<std::size_t, std::size_t>> highlight);

}  // namespace attn::gui
