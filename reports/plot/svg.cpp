// svg_document(): one SVG element per draw command, clip rects as <clipPath>, fixed number format
// so the output is byte-stable (golden-tested).
#include "reports/plot/svg.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <variant>
#include <vector>

#include "reports/plot/plot_layout.hpp"
#include "reports/plot/raster.hpp"

namespace attn::plot {

namespace {

// Two decimals, trailing zeros dropped: "12.5", "3", "-0.25".
std::string num(double v) {
  std::string s = fmt::format("{:.2f}", v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

std::string colour(Color c) { return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b); }

// fill="#rrggbb" plus fill-opacity when not opaque; `what` is "fill" or "stroke".
std::string paint(const char* what, Color c) {
  std::string s = fmt::format(R"({}="{}")", what, colour(c));
  if (c.a != 255) s += fmt::format(R"( {}-opacity="{}")", what, num(c.a / 255.0));
  return s;
}

std::string escaped(const std::string& t) {
  std::string s;
  for (char ch : t) {
    switch (ch) {
      case '&':
        s += "&amp;";
        break;
      case '<':
        s += "&lt;";
        break;
      case '>':
        s += "&gt;";
        break;
      case '"':
        s += "&quot;";
        break;
      default:
        s += ch;
    }
  }
  return s;
}

std::string points(const std::vector<Vec2>& pts) {
  std::string s;
  for (const Vec2& v : pts) {
    if (!s.empty()) s.push_back(' ');
    s.append(num(v.x)).push_back(',');
    s.append(num(v.y));
  }
  return s;
}

class Writer {
 public:
  Writer(std::string& out, const TtfFont& font) : m_out(out), m_font(font) {}

  void operator()(const DrawPolyline& p) {
    if (p.points.empty()) return;
    std::vector<Vec2> pts = p.points;
    if (pts.size() == 1) pts.push_back(pts.front());  // a dot: round caps draw it
    m_out += fmt::format(
        R"(<polyline points="{}" fill="none" {} stroke-width="{}" stroke-linecap="round" stroke-linejoin="round"/>)"
        "\n",
        points(pts), paint("stroke", p.color), num(p.thickness));
  }
  void operator()(const DrawRect& r) {
    const Rect& a = r.rect;
    if (r.filled)
      m_out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" {}/>)"
                           "\n",
                           num(a.x0), num(a.y0), num(a.width()), num(a.height()), paint("fill", r.color));
    else
      m_out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" {} stroke-width="{}"/>)"
                           "\n",
                           num(a.x0), num(a.y0), num(a.width()), num(a.height()), paint("stroke", r.color),
                           num(r.thickness));
  }
  void operator()(const DrawCircle& c) {
    if (c.filled)
      m_out += fmt::format(R"(<circle cx="{}" cy="{}" r="{}" {}/>)"
                           "\n",
                           num(c.center.x), num(c.center.y), num(c.radius), paint("fill", c.color));
    else
      m_out += fmt::format(R"(<circle cx="{}" cy="{}" r="{}" fill="none" {} stroke-width="{}"/>)"
                           "\n",
                           num(c.center.x), num(c.center.y), num(c.radius), paint("stroke", c.color),
                           num(c.thickness));
  }
  void operator()(const DrawPolygon& p) {
    m_out += fmt::format(R"(<polygon points="{}" {}/>)"
                         "\n",
                         points(p.points), paint("fill", p.color));
  }
  void operator()(const DrawText& t) {
    if (t.text.empty()) return;
    const float w = m_font.text_width(t.text, t.size_px, t.bold);
    const float base = m_font.ascent(t.size_px, t.bold);
    const std::string attrs =
        fmt::format(R"(font-size="{}"{} {} textLength="{}" lengthAdjust="spacingAndGlyphs")",
                    num(m_font.em_px(t.size_px, t.bold)), t.bold ? R"( font-weight="bold")" : "",
                    paint("fill", t.color), num(w));
    if (!t.rotated) {
      m_out += fmt::format(R"(<text x="{}" y="{}" {}>{}</text>)"
                           "\n",
                           num(t.top_left.x), num(t.top_left.y + base), attrs, escaped(t.text));
      return;
    }
    // Bottom to top: the text's own frame turned -90 degrees about the bottom-left of its box.
    const float x = t.top_left.x + base, y = t.top_left.y + w;
    m_out += fmt::format(R"x(<text transform="translate({},{}) rotate(-90)" {}>{}</text>)x"
                         "\n",
                         num(x), num(y), attrs, escaped(t.text));
  }
  void operator()(const PushClip& c) {
    const std::string id = fmt::format("c{}", m_next_clip++);
    m_out += fmt::format(R"(<clipPath id="{}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath>)"
                         "\n"
                         R"x(<g clip-path="url(#{})">)x"
                         "\n",
                         id, num(c.rect.x0), num(c.rect.y0), num(c.rect.width()), num(c.rect.height()), id);
    ++m_open;
  }
  void operator()(const PopClip&) {
    if (m_open == 0) return;
    --m_open;
    m_out += "</g>\n";
  }
  void close() {
    for (; m_open > 0; --m_open) m_out += "</g>\n";
  }

 private:
  std::string& m_out;
  const TtfFont& m_font;
  int m_next_clip = 0, m_open = 0;
};

}  // namespace

std::string svg_document(const DrawList& draw, int width, int height, const TtfFont& font) {
  std::string out =
      fmt::format(R"(<?xml version="1.0" encoding="UTF-8"?>)"
                  "\n"
                  R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                  R"(font-family="DejaVu Sans, Verdana, sans-serif">)"
                  "\n",
                  width, height);
  Writer w(out, font);
  for (const DrawCmd& cmd : draw.cmds) std::visit(w, cmd);
  w.close();
  out += "</svg>\n";
  return out;
}

std::string render_plot_svg(const Plot& plot, int width, int height) {
  const TtfFont& font = TtfFont::builtin();
  const PlotLayout layout = layout_plot(plot, static_cast<float>(width), static_cast<float>(height), font,
                                        default_style(width, height));
  return svg_document(layout.draw, width, height, font);
}

void write_svg(const std::string& svg, const std::filesystem::path& file) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (out) out.write(svg.data(), static_cast<std::streamsize>(svg.size()));
  if (out) out.close();
  if (!out) throw PlotIoError("cannot write " + file.string() + ": " + std::strerror(errno));
}

}  // namespace attn::plot
