// ImDrawList renderer of plot::DrawList, the GUI fonts, and the plot widget's interaction.
#include "app/gui/imgui_plot.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <span>
#include <type_traits>
#include <variant>

#include "app/gui/offscreen.hpp"
#include "reports/plot/font.hpp"

namespace attn::gui {

namespace {

// Latin-1 (µ, ×, °), general punctuation, arrows, ≤ ≥, geometric shapes (▶ ■ ●).
const ImWchar kGlyphRanges[] = {0x0020, 0x00FF, 0x2013, 0x2026, 0x2190, 0x2193,
                                0x2264, 0x2265, 0x25A0, 0x25FF, 0};

// The TTF bytes: embedded in the binary, else the Debian fonts package. Static: ImGui's atlas
// reads them without owning them.
std::span<const unsigned char> ttf_bytes(bool bold) {
  static std::vector<unsigned char> from_file[2];
  const auto embedded = plot::embedded_font(bold);
  if (!embedded.empty()) return embedded;
  std::vector<unsigned char>& v = from_file[bold ? 1 : 0];
  if (v.empty()) {
    std::ifstream in(bold ? "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
                          : "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                     std::ios::binary);
    v.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return v;
}

}  // namespace

void GuiFonts::load(ImGuiIO& io, float scale) {
  m_scale = scale;
  m_faces.clear();
  const auto regular = ttf_bytes(false), bold = ttf_bytes(true);
  if (regular.empty()) {
    m_ui = io.Fonts->AddFontDefault();
    m_ui_bold = m_large = m_ui;
    m_faces.push_back({13, false, m_ui});
    m_description = "ImGui default font (no DejaVu Sans TTF found)";
    return;
  }
  auto add = [&](float size, bool want_bold) {
    const auto bytes = want_bold && !bold.empty() ? bold : regular;
    ImFontConfig cfg;
    cfg.FontDataOwnedByAtlas = false;
    cfg.OversampleH = 2;
    cfg.OversampleV = 1;
    cfg.PixelSnapH = false;
    ImFont* f = io.Fonts->AddFontFromMemoryTTF(const_cast<unsigned char*>(bytes.data()),
                                               static_cast<int>(bytes.size()), std::round(size * scale), &cfg,
                                               kGlyphRanges);
    m_faces.push_back({std::round(size * scale), want_bold, f});
    return f;
  };
  // The UI face first: ImGui's default font is the first one added.
  m_ui = add(14, false);
  for (float s : {11.f, 12.f, 15.f}) add(s, false);
  m_ui_bold = add(14, true);
  m_large = add(17, true);
  m_description =
      plot::embedded_font(false).empty() ? "DejaVu Sans (fonts-dejavu-core)" : "DejaVu Sans (embedded)";
}

std::pair<ImFont*, float> GuiFonts::pick(float size_px, bool bold) const {
  const Face* best = nullptr;
  float best_cost = 1e9f;
  for (const Face& f : m_faces) {
    // Prefer the right weight; among those, the nearest size.
    const float cost = std::fabs(f.size - size_px) + (f.bold == bold ? 0.0f : 100.0f);
    if (cost < best_cost) best_cost = cost, best = &f;
  }
  if (!best) return {ImGui::GetFont(), ImGui::GetFontSize()};
  return {best->font, best->size};
}

float GuiFonts::text_width(std::string_view utf8, float size_px, bool bold) const {
  const auto [font, size] = pick(size_px, bold);
  return font->CalcTextSizeA(size, 1e9f, 0.0f, utf8.data(), utf8.data() + utf8.size()).x;
}

plot::Style screen_style(const GuiFonts& fonts) {
  plot::Style st;
  st.scale = fonts.scale();
  st.pad = 8;
  return st;
}

void render_draw_list(ImDrawList* dl, const plot::DrawList& draw, const GuiFonts& fonts, ImVec2 off,
                      std::optional<plot::Color> skip_fill) {
  auto p = [&](plot::Vec2 v) { return ImVec2(v.x + off.x, v.y + off.y); };
  std::vector<ImVec2> pts;
  for (const plot::DrawCmd& cmd : draw.cmds) {
    std::visit(
        [&](const auto& c) {
          using T = std::decay_t<decltype(c)>;
          if constexpr (std::is_same_v<T, plot::DrawPolyline>) {
            pts.clear();
            for (const plot::Vec2& v : c.points) pts.push_back(p(v));
            dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), to_imgui(c.color), ImDrawFlags_None,
                            c.thickness);
          } else if constexpr (std::is_same_v<T, plot::DrawRect>) {
            const ImVec2 a = p({c.rect.x0, c.rect.y0}), b = p({c.rect.x1, c.rect.y1});
            // An opaque fill in the panel's own colour (the figure and plot-area backgrounds) would
            // only repaint what the panel already painted: on a software rasteriser that is the
            // costliest thing in the frame.
            if (c.filled && skip_fill && c.color == *skip_fill) return;
            if (c.filled)
              dl->AddRectFilled(a, b, to_imgui(c.color));
            else
              dl->AddRect(a, b, to_imgui(c.color), 0.0f, ImDrawFlags_None, c.thickness);
          } else if constexpr (std::is_same_v<T, plot::DrawCircle>) {
            // Few segments at marker sizes (round enough under 5 px), so 4000 markers stay cheap.
            if (c.filled)
              dl->AddCircleFilled(p(c.center), c.radius, to_imgui(c.color), c.radius < 5 ? 8 : 12);
            else
              dl->AddCircle(p(c.center), c.radius, to_imgui(c.color), 16, c.thickness);
          } else if constexpr (std::is_same_v<T, plot::DrawPolygon>) {
            pts.clear();
            for (const plot::Vec2& v : c.points) pts.push_back(p(v));
            dl->AddConvexPolyFilled(pts.data(), static_cast<int>(pts.size()), to_imgui(c.color));
          } else if constexpr (std::is_same_v<T, plot::DrawText>) {
            const auto [font, size] = fonts.pick(c.size_px, c.bold);
            const char* b = c.text.data();
            const char* e = b + c.text.size();
            if (!c.rotated) {
              dl->AddText(font, size, p(c.top_left), to_imgui(c.color), b, e);
              return;
            }
            // Bottom-to-top text: draw it horizontally at the origin, then turn its vertices
            // 90 degrees counter-clockwise into the tall box whose top-left is top_left.
            const float w = font->CalcTextSizeA(size, 1e9f, 0.0f, b, e).x;
            const int first = dl->VtxBuffer.Size;
            dl->AddText(font, size, ImVec2(0, 0), to_imgui(c.color), b, e);
            const ImVec2 tl = p(c.top_left);
            for (int i = first; i < dl->VtxBuffer.Size; ++i) {
              ImDrawVert& v = dl->VtxBuffer[i];
              const ImVec2 q = v.pos;
              v.pos = ImVec2(tl.x + q.y, tl.y + w - q.x);
            }
          } else if constexpr (std::is_same_v<T, plot::PushClip>) {
            dl->PushClipRect(p({c.rect.x0, c.rect.y0}), p({c.rect.x1, c.rect.y1}), true);
          } else if constexpr (std::is_same_v<T, plot::PopClip>) {
            dl->PopClipRect();
          }
        },
        cmd);
  }
}

void update_plot(PlotWidget& w, plot::Plot fresh) {
  if (w.has_plot) {
    std::map<std::string, bool> visible;
    for (const plot::Series& s : w.plot.series) visible[s.label] = s.visible;
    for (plot::Series& s : fresh.series)
      if (const auto it = visible.find(s.label); it != visible.end()) s.visible = it->second;
    // Keep a zoomed/panned view when the axes keep their meaning.
    if (fresh.x.label == w.plot.x.label && fresh.x.scale == w.plot.x.scale && !w.plot.x.auto_fit) {
      fresh.x.auto_fit = false;
      fresh.x.range = w.plot.x.range;
    }
    if (fresh.y.label == w.plot.y.label && fresh.y.scale == w.plot.y.scale && !w.plot.y.auto_fit) {
      fresh.y.auto_fit = false;
      fresh.y.range = w.plot.y.range;
    }
  }
  w.plot = std::move(fresh);
  w.has_plot = true;
  w.message.clear();
  w.hover.reset();
  ++w.revision;
}

PlotEvents plot_widget(const char* id, PlotWidget& w, const GuiFonts& fonts, ImVec2 size,
                       std::optional<std::pair<std::size_t, std::size_t>> highlight) {
  PlotEvents ev;
  // Whole pixels: the cached texture maps 1:1 onto the screen.
  size.x = std::floor(std::max(size.x, 64.0f));
  size.y = std::floor(std::max(size.y, 64.0f));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ev.origin = origin;
  ImGui::InvisibleButton(id, size, ImGuiButtonFlags_MouseButtonLeft);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (!w.has_plot) {
    const std::string& m = w.message.empty() ? std::string("nothing to plot yet") : w.message;
    const ImVec2 ts = ImGui::CalcTextSize(m.c_str(), nullptr, false, size.x - 40);
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(),
                ImVec2(origin.x + std::max(20.0f, (size.x - ts.x) / 2), origin.y + (size.y - ts.y) / 2),
                IM_COL32(110, 110, 110, 255), m.c_str(), nullptr, size.x - 40);
    return ev;
  }
  const plot::Style st = screen_style(fonts);
  if (w.layout_revision != w.revision || w.layout_size.x != size.x || w.layout_size.y != size.y) {
    w.layout = plot::layout_plot(w.plot, size.x, size.y, fonts, st);
    w.layout_revision = w.revision;
    w.layout_size = size;
  }
  const plot::Rect& a = w.layout.plot_area;
  ev.plot_area = {a.x0 + origin.x, a.y0 + origin.y, a.x1 + origin.x, a.y1 + origin.y};

  const ImGuiIO& io = ImGui::GetIO();
  const float mx = io.MousePos.x - origin.x, my = io.MousePos.y - origin.y;
  const bool hovered = ImGui::IsItemHovered();
  bool changed = false;

  // Legend: a click on an entry toggles its series.
  bool over_legend = false;
  for (const plot::LegendItem& li : w.layout.legend) {
    if (!li.rect.contains(mx, my)) continue;
    over_legend = true;
    if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      w.plot.series[li.series].visible = !w.plot.series[li.series].visible;
      changed = true;
    }
  }

  // Which axes a wheel or drag acts on: the data area = both, the band under it = x, left of it = y.
  plot::AxisMask mask = plot::AxisMask::both;
  if (my > a.y1 && mx >= a.x0) mask = plot::AxisMask::x;
  if (mx < a.x0 && my <= a.y1) mask = plot::AxisMask::y;
  if (hovered && !over_legend && io.MouseWheel != 0) {
    const plot::Viewport v = plot::zoom(w.layout.viewport, mx, my, std::pow(1.2, io.MouseWheel), mask);
    plot::apply_view(w.plot, v);
    changed = true;
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3.0f) && !over_legend) {
    const ImVec2 d = io.MouseDelta;
    if (d.x != 0 || d.y != 0) {
      plot::apply_view(w.plot, plot::pan(w.layout.viewport, d.x, d.y, mask));
      w.drag_moved = true;
      changed = true;
    }
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    plot::reset_view(w.plot);
    changed = true;
  }

  w.hover.reset();
  if (hovered && !over_legend && a.contains(mx, my) && !w.drag_moved)
    w.hover = plot::nearest_point(w.plot, w.layout.viewport, mx, my, 14.0 * fonts.scale());
  if (ImGui::IsItemDeactivated()) {
    if (!w.drag_moved && w.hover) ev.clicked = w.hover;
    w.drag_moved = false;
  }
  ev.hovered = w.hover;

  if (changed) {
    ++w.revision;
    w.layout = plot::layout_plot(w.plot, size.x, size.y, fonts, st);
    w.layout_revision = w.revision;
  }
  dl->PushClipRect(origin, ImVec2(origin.x + size.x, origin.y + size.y), true);
  if (!w.texture) w.texture = std::make_shared<PlotTexture>();
  if (w.texture_revision != w.layout_revision || w.texture_size.x != size.x || w.texture_size.y != size.y) {
    w.texture_ok =
        w.texture->render(w.layout.draw, fonts, static_cast<int>(size.x), static_cast<int>(size.y));
    w.texture_revision = w.layout_revision;
    w.texture_size = size;
  }
  if (w.texture_ok)
    dl->AddImage(w.texture->texture(), origin, ImVec2(origin.x + size.x, origin.y + size.y), ImVec2(0, 1),
                 ImVec2(1, 0));
  else
    render_draw_list(dl, w.layout.draw, fonts, origin, plot::Color{255, 255, 255, 255});
  plot::DrawList overlay;
  if (highlight && highlight->first < w.plot.series.size()) {
    const plot::Series& s = w.plot.series[highlight->first];
    if (s.visible && highlight->second < s.x.size()) {
      const plot::Viewport& vp = w.layout.viewport;
      const double px = vp.to_px_x(s.x[highlight->second]), py = vp.to_px_y(s.y[highlight->second]);
      if (std::isfinite(px) && std::isfinite(py) &&
          a.contains(static_cast<float>(px), static_cast<float>(py))) {
        overlay.cmds.emplace_back(plot::DrawCircle{{static_cast<float>(px), static_cast<float>(py)},
                                                   st.s(st.marker_radius + 4),
                                                   plot::Color{20, 20, 20, 255},
                                                   false,
                                                   st.s(2)});
      }
    }
  }
  if (w.hover) plot::append_hover(overlay, w.plot, w.layout, *w.hover, fonts, st);
  render_draw_list(dl, overlay, fonts, origin);
  dl->PopClipRect();
  return ev;
}

}  // namespace attn::gui
