// PlotTexture: an OpenGL framebuffer object with a colour texture; the plot's ImDrawList is
// rendered into it through the ImGui OpenGL3 backend, outside the frame's own draw data.
#include "app/gui/offscreen.hpp"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_opengl3.h>

#include <cstdint>

namespace attn::gui {

namespace {

// The GL 3.0 entry points used here, fetched through GLFW (attnscope-gui does not link libGL).
struct GlFbo {
  void (*GenFramebuffers)(int, unsigned*) = nullptr;
  void (*DeleteFramebuffers)(int, const unsigned*) = nullptr;
  void (*BindFramebuffer)(unsigned, unsigned) = nullptr;
  void (*FramebufferTexture2D)(unsigned, unsigned, unsigned, unsigned, int) = nullptr;
  unsigned (*CheckFramebufferStatus)(unsigned) = nullptr;
  void (*GenTextures)(int, unsigned*) = nullptr;
  void (*DeleteTextures)(int, const unsigned*) = nullptr;
  void (*BindTexture)(unsigned, unsigned) = nullptr;
  void (*TexImage2D)(unsigned, int, int, int, int, int, unsigned, unsigned, const void*) = nullptr;
  void (*TexParameteri)(unsigned, unsigned, int) = nullptr;
  void (*GetIntegerv)(unsigned, int*) = nullptr;
  void (*ClearColor)(float, float, float, float) = nullptr;
  void (*Clear)(unsigned) = nullptr;
  bool ok = false;
};

constexpr unsigned kFramebuffer = 0x8D40, kColorAttachment0 = 0x8CE0, kFramebufferComplete = 0x8CD5,
                   kTexture2D = 0x0DE1, kRgba = 0x1908, kRgba8 = 0x8058, kUnsignedByte = 0x1401,
                   kTexMinFilter = 0x2801, kTexMagFilter = 0x2800, kLinear = 0x2601,
                   kFramebufferBinding = 0x8CA6, kTextureBinding2D = 0x8069, kColorBufferBit = 0x4000;

const GlFbo& gl() {
  static const GlFbo g = [] {
    GlFbo f;
    auto get = [](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(glfwGetProcAddress(name));
    };
    get(f.GenFramebuffers, "glGenFramebuffers");
    get(f.DeleteFramebuffers, "glDeleteFramebuffers");
    get(f.BindFramebuffer, "glBindFramebuffer");
    get(f.FramebufferTexture2D, "glFramebufferTexture2D");
    get(f.CheckFramebufferStatus, "glCheckFramebufferStatus");
    get(f.GenTextures, "glGenTextures");
    get(f.DeleteTextures, "glDeleteTextures");
    get(f.BindTexture, "glBindTexture");
    get(f.TexImage2D, "glTexImage2D");
    get(f.TexParameteri, "glTexParameteri");
    get(f.GetIntegerv, "glGetIntegerv");
    get(f.ClearColor, "glClearColor");
    get(f.Clear, "glClear");
    f.ok = f.GenFramebuffers && f.DeleteFramebuffers && f.BindFramebuffer && f.FramebufferTexture2D &&
           f.CheckFramebufferStatus && f.GenTextures && f.DeleteTextures && f.BindTexture && f.TexImage2D &&
           f.TexParameteri && f.GetIntegerv && f.ClearColor && f.Clear;
    return f;
  }();
  return g;
}

}  // namespace

PlotTexture::~PlotTexture() {
  if (!gl().ok || !glfwGetCurrentContext()) return;
  if (m_fbo) gl().DeleteFramebuffers(1, &m_fbo);
  if (m_tex) gl().DeleteTextures(1, &m_tex);
}

ImTextureID PlotTexture::texture() const {
  return reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(m_tex));
}

bool PlotTexture::render(const plot::DrawList& draw, const GuiFonts& fonts, int w, int h) {
  const GlFbo& g = gl();
  if (!g.ok || w <= 0 || h <= 0) return false;
  int prev_fbo = 0, prev_tex = 0;
  g.GetIntegerv(kFramebufferBinding, &prev_fbo);
  g.GetIntegerv(kTextureBinding2D, &prev_tex);
  if (!m_fbo) {
    g.GenFramebuffers(1, &m_fbo);
    g.GenTextures(1, &m_tex);
  }
  if (w != m_w || h != m_h) {
    g.BindTexture(kTexture2D, m_tex);
    g.TexImage2D(kTexture2D, 0, static_cast<int>(kRgba8), w, h, 0, kRgba, kUnsignedByte, nullptr);
    g.TexParameteri(kTexture2D, kTexMinFilter, static_cast<int>(kLinear));
    g.TexParameteri(kTexture2D, kTexMagFilter, static_cast<int>(kLinear));
    g.BindFramebuffer(kFramebuffer, m_fbo);
    g.FramebufferTexture2D(kFramebuffer, kColorAttachment0, kTexture2D, m_tex, 0);
    m_w = w;
    m_h = h;
  }
  g.BindFramebuffer(kFramebuffer, m_fbo);
  const bool complete = g.CheckFramebufferStatus(kFramebuffer) == kFramebufferComplete;
  if (complete) {
    g.ClearColor(1, 1, 1, 1);
    g.Clear(kColorBufferBit);
    ImDrawList list(ImGui::GetDrawListSharedData());
    list._ResetForNewFrame();
    // AllowVtxOffset: a dense plot passes 65536 vertices, past 16-bit indices without it.
    list.Flags = ImDrawListFlags_AntiAliasedLines | ImDrawListFlags_AntiAliasedLinesUseTex |
                 ImDrawListFlags_AntiAliasedFill | ImDrawListFlags_AllowVtxOffset;
    list.PushTextureID(ImGui::GetIO().Fonts->TexID);
    list.PushClipRect(ImVec2(0, 0), ImVec2(static_cast<float>(w), static_cast<float>(h)), false);
    render_draw_list(&list, draw, fonts, ImVec2(0, 0));
    list.PopClipRect();
    list.PopTextureID();
    ImDrawList* lists[] = {&list};
    ImDrawData data;
    data.Valid = true;
    data.CmdLists = lists;
    data.CmdListsCount = 1;
    data.TotalVtxCount = list.VtxBuffer.Size;
    data.TotalIdxCount = list.IdxBuffer.Size;
    data.DisplayPos = ImVec2(0, 0);
    data.DisplaySize = ImVec2(static_cast<float>(w), static_cast<float>(h));
    data.FramebufferScale = ImVec2(1, 1);
    ImGui_ImplOpenGL3_RenderDrawData(&data);
  }
  g.BindFramebuffer(kFramebuffer, static_cast<unsigned>(prev_fbo));
  g.BindTexture(kTexture2D, static_cast<unsigned>(prev_tex));
  return complete;
}

}  // namespace attn::gui
