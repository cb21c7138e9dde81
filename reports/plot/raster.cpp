// The CPU rasteriser: coverage-based anti-aliasing (signed distance to segments and circles, box
// overlap for rects), source-over blending, integer clip rects as ImGui's scissor, and PNG output.
#include "reports/plot/raster.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <tuple>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

namespace attn::plot {

Color Image::at(int x, int y) const {
  const std::size_t i =
      (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 4;
  return {rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3]};
}

namespace {

struct IRect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // half-open pixel range
  bool empty() const { return x0 >= x1 || y0 >= y1; }
};

IRect intersect(IRect a, IRect b) {
  return {std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1), std::min(a.y1, b.y1)};
}

class Canvas {
 public:
  Canvas(int w, int h, const TtfFont& font) : m_font(font) {
    m_image.width = w;
    m_image.height = h;
    m_image.rgba.assign(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4, 0);
    m_clip.push_back({0, 0, w, h});
  }

  Image take() { return std::move(m_image); }

  void operator()(const DrawPolyline& p) {
    if (p.points.empty()) return;
    const float r = std::max(p.thickness, 0.5f) / 2;
    float minx = p.points[0].x, maxx = minx, miny = p.points[0].y, maxy = miny;
    for (const Vec2& v : p.points) {
      minx = std::min(minx, v.x), maxx = std::max(maxx, v.x);
      miny = std::min(miny, v.y), maxy = std::max(maxy, v.y);
    }
    const IRect box = bounds(minx - r - 1, miny - r - 1, maxx + r + 1, maxy + r + 1);
    if (box.empty()) return;
    // Coverage is the max over segments, so joins are not blended twice.
    std::vector<float> cov(
        static_cast<std::size_t>(box.x1 - box.x0) * static_cast<std::size_t>(box.y1 - box.y0), 0);
    auto segment = [&](Vec2 a, Vec2 b) {
      const IRect sb = intersect(box, bounds(std::min(a.x, b.x) - r - 1, std::min(a.y, b.y) - r - 1,
                                             std::max(a.x, b.x) + r + 1, std::max(a.y, b.y) + r + 1));
      const float dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
      for (int y = sb.y0; y < sb.y1; ++y)
        for (int x = sb.x0; x < sb.x1; ++x) {
          const float px = static_cast<float>(x) + 0.5f - a.x, py = static_cast<float>(y) + 0.5f - a.y;
          const float t = len2 > 0 ? std::clamp((px * dx + py * dy) / len2, 0.0f, 1.0f) : 0.0f;
          const float d = std::hypot(px - t * dx, py - t * dy);
          float& c = cov[static_cast<std::size_t>(y - box.y0) * static_cast<std::size_t>(box.x1 - box.x0) +
                         static_cast<std::size_t>(x - box.x0)];
          c = std::max(c, std::clamp(r + 0.5f - d, 0.0f, 1.0f));
        }
    };
    if (p.points.size() == 1) segment(p.points[0], p.points[0]);
    for (std::size_t i = 1; i < p.points.size(); ++i) segment(p.points[i - 1], p.points[i]);
    for (int y = box.y0; y < box.y1; ++y)
      for (int x = box.x0; x < box.x1; ++x)
        blend(x, y, p.color,
              cov[static_cast<std::size_t>(y - box.y0) * static_cast<std::size_t>(box.x1 - box.x0) +
                  static_cast<std::size_t>(x - box.x0)]);
  }

  void operator()(const DrawRect& r) {
    if (r.filled) {
      fill_rect(r.rect.x0, r.rect.y0, r.rect.x1, r.rect.y1, r.color);
      return;
    }
    // The stroke is centred on the rectangle's edges.
    const float h = r.thickness / 2;
    const Rect& a = r.rect;
    fill_rect(a.x0 - h, a.y0 - h, a.x1 + h, a.y0 + h, r.color);
    fill_rect(a.x0 - h, a.y1 - h, a.x1 + h, a.y1 + h, r.color);
    fill_rect(a.x0 - h, a.y0 + h, a.x0 + h, a.y1 - h, r.color);
    fill_rect(a.x1 - h, a.y0 + h, a.x1 + h, a.y1 - h, r.color);
  }

  void operator()(const DrawCircle& c) {
    const float reach = c.radius + c.thickness + 1;
    const IRect box = bounds(c.center.x - reach, c.center.y - reach, c.center.x + reach, c.center.y + reach);
    for (int y = box.y0; y < box.y1; ++y)
      for (int x = box.x0; x < box.x1; ++x) {
        const float d =
            std::hypot(static_cast<float>(x) + 0.5f - c.center.x, static_cast<float>(y) + 0.5f - c.center.y);
        const float cov = c.filled ? c.radius + 0.5f - d : c.thickness / 2 + 0.5f - std::fabs(d - c.radius);
        blend(x, y, c.color, std::clamp(cov, 0.0f, 1.0f));
      }
  }

  // Coverage from the signed distance to the nearest edge: the largest signed edge distance of a
  // convex polygon is negative inside and about the pixel distance to it outside.
  void operator()(const DrawPolygon& p) {
    const std::size_t n = p.points.size();
    if (n < 3) return;
    float minx = p.points[0].x, maxx = minx, miny = p.points[0].y, maxy = miny;
    float area2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Vec2 a = p.points[i], b = p.points[(i + 1) % n];
      minx = std::min(minx, a.x), maxx = std::max(maxx, a.x);
      miny = std::min(miny, a.y), maxy = std::max(maxy, a.y);
      area2 += a.x * b.y - b.x * a.y;
    }
    if (area2 == 0) return;
    const float sign = area2 > 0 ? 1.0f : -1.0f;  // either winding
    const IRect box = bounds(minx - 1, miny - 1, maxx + 1, maxy + 1);
    for (int y = box.y0; y < box.y1; ++y)
      for (int x = box.x0; x < box.x1; ++x) {
        const float px = static_cast<float>(x) + 0.5f, py = static_cast<float>(y) + 0.5f;
        float d = -1e30f;
        for (std::size_t i = 0; i < n; ++i) {
          const Vec2 a = p.points[i], b = p.points[(i + 1) % n];
          const float ex = b.x - a.x, ey = b.y - a.y, len = std::hypot(ex, ey);
          if (len == 0) continue;
          // Outward distance: the edge normal points away from the interior for this winding.
          d = std::max(d, sign * ((px - a.x) * ey - (py - a.y) * ex) / len);
        }
        blend(x, y, p.color, std::clamp(0.5f - d, 0.0f, 1.0f));
      }
  }

  void operator()(const DrawText& t) {
    const std::u32string cps = decode_utf8(t.text);
    if (cps.empty()) return;
    // Glyphs go into a coverage buffer in the text's own frame, which is then blitted (rotated
    // for the y-axis title).
    const float width = m_font.text_width(t.text, t.size_px, t.bold);
    const int bw = static_cast<int>(std::ceil(width)) + 4,
              bh = static_cast<int>(std::ceil(t.size_px * 1.3f)) + 4;
    std::vector<float> cov(static_cast<std::size_t>(bw) * static_cast<std::size_t>(bh), 0);
    const float baseline = m_font.ascent(t.size_px, t.bold);
    // Sub-pixel pen start so the text lands where layout put it.
    const float ox = t.rotated ? 0 : t.top_left.x - std::floor(t.top_left.x);
    const float oy = t.rotated ? 0 : t.top_left.y - std::floor(t.top_left.y);
    float pen = 1 + ox;
    for (std::size_t i = 0; i < cps.size(); ++i) {
      const float fl = std::floor(pen);
      const GlyphBitmap g = glyph(cps[i], t.size_px, t.bold, pen - fl);
      const int gx = static_cast<int>(fl) + g.x_offset;
      const int gy = static_cast<int>(std::lround(1 + oy + baseline)) + g.y_offset;
      for (int y = 0; y < g.height; ++y)
        for (int x = 0; x < g.width; ++x) {
          const int cx = gx + x, cy = gy + y;
          if (cx < 0 || cy < 0 || cx >= bw || cy >= bh) continue;
          float& c =
              cov[static_cast<std::size_t>(cy) * static_cast<std::size_t>(bw) + static_cast<std::size_t>(cx)];
          c = std::min(1.0f, c + g.coverage[static_cast<std::size_t>(y) * static_cast<std::size_t>(g.width) +
                                            static_cast<std::size_t>(x)] /
                                     255.0f);
        }
      pen += m_font.advance(cps[i], t.size_px, t.bold);
      if (i + 1 < cps.size()) pen += m_font.kerning(cps[i], cps[i + 1], t.size_px, t.bold);
    }
    const int x0 = static_cast<int>(std::floor(t.top_left.x)) - 1,
              y0 = static_cast<int>(std::floor(t.top_left.y)) - 1;
    for (int v = 0; v < bh; ++v)
      for (int u = 0; u < bw; ++u) {
        const float c =
            cov[static_cast<std::size_t>(v) * static_cast<std::size_t>(bw) + static_cast<std::size_t>(u)];
        if (c <= 0) continue;
        // Rotated 90° counter-clockwise: the text's start sits at the bottom of its box.
        const int w_rot = static_cast<int>(std::ceil(width)) + 2;
        if (t.rotated)
          blend(x0 + v, y0 + w_rot - u, t.color, c);
        else
          blend(x0 + u, y0 + v, t.color, c);
      }
  }

  void operator()(const PushClip& c) {
    const IRect r{static_cast<int>(std::lround(c.rect.x0)), static_cast<int>(std::lround(c.rect.y0)),
                  static_cast<int>(std::lround(c.rect.x1)), static_cast<int>(std::lround(c.rect.y1))};
    m_clip.push_back(intersect(m_clip.back(), r));
  }
  void operator()(const PopClip&) {
    if (m_clip.size() > 1) m_clip.pop_back();
  }

 private:
  IRect bounds(float x0, float y0, float x1, float y1) const {
    return intersect(m_clip.back(), {static_cast<int>(std::floor(x0)), static_cast<int>(std::floor(y0)),
                                     static_cast<int>(std::ceil(x1)), static_cast<int>(std::ceil(y1))});
  }

  void fill_rect(float x0, float y0, float x1, float y1, Color c) {
    const IRect box = bounds(x0, y0, x1, y1);
    for (int y = box.y0; y < box.y1; ++y) {
      const float cy = std::clamp(
          std::min(y1, static_cast<float>(y + 1)) - std::max(y0, static_cast<float>(y)), 0.0f, 1.0f);
      for (int x = box.x0; x < box.x1; ++x) {
        const float cx = std::clamp(
            std::min(x1, static_cast<float>(x + 1)) - std::max(x0, static_cast<float>(x)), 0.0f, 1.0f);
        blend(x, y, c, cx * cy);
      }
    }
  }

  void blend(int x, int y, Color c, float coverage) {
    const IRect& clip = m_clip.back();
    if (coverage <= 0 || x < clip.x0 || y < clip.y0 || x >= clip.x1 || y >= clip.y1) return;
    std::uint8_t* p = &m_image.rgba[(static_cast<std::size_t>(y) * static_cast<std::size_t>(m_image.width) +
                                     static_cast<std::size_t>(x)) *
                                    4];
    const float a = coverage * static_cast<float>(c.a) / 255.0f;
    const float src[3] = {static_cast<float>(c.r), static_cast<float>(c.g), static_cast<float>(c.b)};
    const float da = static_cast<float>(p[3]) / 255.0f;
    const float out_a = a + da * (1 - a);
    for (int k = 0; k < 3; ++k) {
      const float v = out_a > 0 ? (src[k] * a + static_cast<float>(p[k]) * da * (1 - a)) / out_a : 0;
      p[k] = static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0f, 255.0f)));
    }
    p[3] = static_cast<std::uint8_t>(std::lround(out_a * 255.0f));
  }

  const GlyphBitmap& glyph(char32_t cp, float px, bool bold, float subpixel) {
    // Quarter-pixel pen positions: enough for even spacing, few cache entries.
    const int q = std::min(3, static_cast<int>(subpixel * 4));
    const auto key = std::make_tuple(cp, px, bold, q);
    auto it = m_glyphs.find(key);
    if (it == m_glyphs.end())
      it = m_glyphs.emplace(key, m_font.glyph(cp, px, bold, static_cast<float>(q) / 4)).first;
    return it->second;
  }

  const TtfFont& m_font;
  Image m_image;
  std::vector<IRect> m_clip;
  std::map<std::tuple<char32_t, float, bool, int>, GlyphBitmap> m_glyphs;
};

}  // namespace

Image rasterize(const DrawList& draw, int width, int height, const TtfFont& font) {
  Canvas canvas(std::max(1, width), std::max(1, height), font);
  for (const DrawCmd& cmd : draw.cmds) std::visit(canvas, cmd);
  return canvas.take();
}

Image render_plot(const Plot& plot, int width, int height) {
  const TtfFont& font = TtfFont::builtin();
  const PlotLayout layout = layout_plot(plot, static_cast<float>(width), static_cast<float>(height), font,
                                        default_style(width, height));
  return rasterize(layout.draw, width, height, font);
}

std::vector<std::uint8_t> encode_png(const Image& image) {
  std::vector<std::uint8_t> out;
  auto sink = [](void* ctx, void* data, int size) {
    auto* v = static_cast<std::vector<std::uint8_t>*>(ctx);
    const auto* b = static_cast<const std::uint8_t*>(data);
    v->insert(v->end(), b, b + size);
  };
  if (!stbi_write_png_to_func(sink, &out, image.width, image.height, 4, image.rgba.data(), image.width * 4))
    throw PlotIoError("PNG encoding of a " + std::to_string(image.width) + "x" +
                      std::to_string(image.height) + " image failed");
  return out;
}

void write_png(const Image& image, const std::filesystem::path& file) {
  const std::vector<std::uint8_t> bytes = encode_png(image);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (out) out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (out) out.close();
  if (!out) throw PlotIoError("cannot write " + file.string() + ": " + std::strerror(errno));
}

std::string renderer_description() { return "software rasteriser, " + TtfFont::builtin().source(); }

}  // namespace attn::plot
