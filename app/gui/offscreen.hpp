// Plot caching on the GPU: a plot's DrawList is rendered once into an OpenGL texture and the frame
// shows that texture, so a 20 x 200-point plot costs one quad per frame instead of ~100k vertices
// (which dominate the frame on a software rasteriser such as Mesa's llvmpipe).
#pragma once
#include <imgui.h>

#include <cstdint>

#include "app/gui/imgui_plot.hpp"

namespace attn::gui {

class PlotTexture {
 public:
  PlotTexture() = default;
  ~PlotTexture();
  PlotTexture(const PlotTexture&) = delete;
  PlotTexture& operator=(const PlotTexture&) = delete;

  // Renders `draw` (in local pixel coordinates) into the texture at width x height; reallocates on
  // a size change. Returns false when framebuffer objects are unavailable (then draw directly).
  bool render(const plot::DrawList& draw, const GuiFonts& fonts, int width, int height);
  ImTextureID texture() const;

 private:
  unsigned m_fbo = 0, m_tex = 0;
  int m_w = 0, m_h = 0;
};

}  // namespace attn::gui
