// TtfFont: stb_truetype faces, text metrics and glyph coverage (the one translation unit that
// compiles stb_truetype, with static linkage so ImGui's own copy never collides).
#include "reports/plot/font.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>

#define STB_TRUETYPE_IMPLEMENTATION
#define STBTT_STATIC
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb/stb_truetype.h>
#pragma GCC diagnostic pop

namespace attn::plot {

struct TtfFont::Face {
  std::vector<unsigned char> bytes;
  stbtt_fontinfo info{};
  int ascent = 0, descent = 0, line_gap = 0;  // [font units]
};

namespace {

std::vector<unsigned char> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

std::u32string decode_utf8(std::string_view s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + static_cast<std::size_t>(len) > s.size()) {
      out.push_back(U'\uFFFD');
      ++i;
      continue;
    }
    char32_t cp = len == 1 ? c : c & (0x7F >> len);
    bool ok = true;
    for (int k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      ok = ok && (cc >> 6) == 0x2;
      cp = (cp << 6) | (cc & 0x3F);
    }
    out.push_back(ok ? cp : U'\uFFFD');
    i += ok ? static_cast<std::size_t>(len) : 1;
  }
  return out;
}

TtfFont::TtfFont(std::vector<unsigned char> regular, std::vector<unsigned char> bold, std::string source)
    : m_source(std::move(source)) {
  m_regular = std::make_unique<Face>();
  m_regular->bytes = std::move(regular);
  auto init = [this](Face& f, const char* which) {
    const int offset = stbtt_GetFontOffsetForIndex(f.bytes.data(), 0);
    if (f.bytes.empty() || offset < 0 || !stbtt_InitFont(&f.info, f.bytes.data(), offset))
      throw FontError("font " + m_source + ": the " + which + " face is not a TrueType font");
    stbtt_GetFontVMetrics(&f.info, &f.ascent, &f.descent, &f.line_gap);
  };
  init(*m_regular, "regular");
  if (!bold.empty()) {
    m_bold = std::make_unique<Face>();
    m_bold->bytes = std::move(bold);
    init(*m_bold, "bold");
  }
}

TtfFont::~TtfFont() = default;

const TtfFont::Face& TtfFont::face(bool bold) const { return bold && m_bold ? *m_bold : *m_regular; }

const TtfFont& TtfFont::builtin() {
  static std::once_flag once;
  static std::unique_ptr<TtfFont> font;
  static std::string error;
  std::call_once(once, [] {
    try {
      const auto reg = embedded_font(false), bold = embedded_font(true);
      if (!reg.empty()) {
        font = std::make_unique<TtfFont>(std::vector<unsigned char>(reg.begin(), reg.end()),
                                         std::vector<unsigned char>(bold.begin(), bold.end()),
                                         "embedded DejaVu Sans");
        return;
      }
      std::string tried;
      if (const char* env = std::getenv("ATTNSCOPE_FONT"); env && *env) {
        auto bytes = read_file(env);
        if (!bytes.empty()) {
          font = std::make_unique<TtfFont>(std::move(bytes), std::vector<unsigned char>{}, env);
          return;
        }
        tried = std::string("$ATTNSCOPE_FONT=") + env + ", ";
      }
      const std::filesystem::path dir = "/usr/share/fonts/truetype/dejavu";
      auto bytes = read_file(dir / "DejaVuSans.ttf");
      if (!bytes.empty()) {
        font = std::make_unique<TtfFont>(std::move(bytes), read_file(dir / "DejaVuSans-Bold.ttf"),
                                         (dir / "DejaVuSans.ttf").string());
        return;
      }
      error = "no font: this build embeds none, and none was readable at " + tried +
              (dir / "DejaVuSans.ttf").string() + " (set ATTNSCOPE_FONT to a .ttf file)";
    } catch (const FontError& e) {
      error = e.what();
    }
  });
  if (!font) throw FontError(error);
  return *font;
}

float TtfFont::em_px(float size_px, bool bold) const {
  const Face& f = face(bold);
  return size_px * stbtt_ScaleForMappingEmToPixels(&f.info, 1.0f) / stbtt_ScaleForPixelHeight(&f.info, 1.0f);
}

float TtfFont::ascent(float size_px, bool bold) const {
  const Face& f = face(bold);
  return static_cast<float>(f.ascent) * stbtt_ScaleForPixelHeight(&f.info, size_px);
}

float TtfFont::advance(char32_t cp, float size_px, bool bold) const {
  const Face& f = face(bold);
  int adv = 0, lsb = 0;
  stbtt_GetCodepointHMetrics(&f.info, static_cast<int>(cp), &adv, &lsb);
  return static_cast<float>(adv) * stbtt_ScaleForPixelHeight(&f.info, size_px);
}

float TtfFont::kerning(char32_t a, char32_t b, float size_px, bool bold) const {
  const Face& f = face(bold);
  return static_cast<float>(
             stbtt_GetCodepointKernAdvance(&f.info, static_cast<int>(a), static_cast<int>(b))) *
         stbtt_ScaleForPixelHeight(&f.info, size_px);
}

float TtfFont::text_width(std::string_view utf8, float size_px, bool bold) const {
  const std::u32string cps = decode_utf8(utf8);
  float w = 0;
  for (std::size_t i = 0; i < cps.size(); ++i) {
    w += advance(cps[i], size_px, bold);
    if (i + 1 < cps.size()) w += kerning(cps[i], cps[i + 1], size_px, bold);
  }
  return w;
}

GlyphBitmap TtfFont::glyph(char32_t cp, float size_px, bool bold, float subpixel_x) const {
  const Face& f = face(bold);
  const float scale = stbtt_ScaleForPixelHeight(&f.info, size_px);
  GlyphBitmap g;
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  stbtt_GetCodepointBitmapBoxSubpixel(&f.info, static_cast<int>(cp), scale, scale, subpixel_x, 0, &x0, &y0,
                                      &x1, &y1);
  g.width = x1 - x0;
  g.height = y1 - y0;
  g.x_offset = x0;
  g.y_offset = y0;
  if (g.width <= 0 || g.height <= 0) return GlyphBitmap{};
  g.coverage.assign(static_cast<std::size_t>(g.width) * static_cast<std::size_t>(g.height), 0);
  stbtt_MakeCodepointBitmapSubpixel(&f.info, g.coverage.data(), g.width, g.height, g.width, scale, scale,
                                    subpixel_x, 0, static_cast<int>(cp));
  return g;
}

}  // namespace attn::plot
