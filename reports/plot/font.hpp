// TrueType text for the PNG renderer: DejaVu Sans (regular and bold) embedded in the binary at
// build time, so PNGs look the same on machines without fonts; glyphs rasterised by stb_truetype.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reports/plot/draw_list.hpp"

namespace attn::plot {

// No usable font: names what was tried.
class FontError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The TTF bytes compiled into the binary (DejaVu Sans, its Bold), empty when the build machine
// had none. The GUI hands the same bytes to ImGui (AddFontFromMemoryTTF, not owned by the atlas).
std::span<const unsigned char> embedded_font(bool bold);

// A glyph's 8-bit coverage bitmap, placed relative to the pen on the baseline [px].
struct GlyphBitmap {
  int width = 0, height = 0;
  int x_offset = 0, y_offset = 0;
  std::vector<std::uint8_t> coverage;  // width * height, row-major
};

class TtfFont : public TextMeasurer {
 public:
  // The embedded faces; otherwise $ATTNSCOPE_FONT (a .ttf; bold then falls back to it), then
  // /usr/share/fonts/truetype/dejavu/. Loaded once; throws FontError when nothing is usable.
  static const TtfFont& builtin();
  // Faces from TTF bytes (copied); `bold` may be empty, then the regular face serves for bold.
  TtfFont(std::vector<unsigned char> regular, std::vector<unsigned char> bold, std::string source);
  ~TtfFont() override;
  TtfFont(const TtfFont&) = delete;
  TtfFont& operator=(const TtfFont&) = delete;

  float text_width(std::string_view utf8, float size_px, bool bold) const override;

  // Baseline distance below the top of a size_px text box [px].
  float ascent(float size_px, bool bold) const;
  // The em size (CSS font-size) of a size_px text box [px]: SVG text must match the raster's.
  float em_px(float size_px, bool bold) const;
  float advance(char32_t cp, float size_px, bool bold) const;
  float kerning(char32_t a, char32_t b, float size_px, bool bold) const;
  // Coverage of `cp` with the pen at a fractional x position `subpixel_x` in [0, 1).
  GlyphBitmap glyph(char32_t cp, float size_px, bool bold, float subpixel_x) const;

  // "embedded DejaVu Sans" or the file it came from.
  const std::string& source() const { return m_source; }

 private:
  struct Face;
  const Face& face(bool bold) const;
  std::unique_ptr<Face> m_regular, m_bold;
  std::string m_source;
};

// Decodes UTF-8; invalid bytes become U+FFFD.
std::u32string decode_utf8(std::string_view s);

}  // namespace attn::plot
