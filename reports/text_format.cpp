// Number, label and width helpers for the terminal outputs.
#include "reports/text_format.hpp"

#include <fmt/format.h>

#include <cmath>

namespace attn {

std::string format_fixed4(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::fabs(v);
  if (a >= 999.95) return fmt::format("{:.0f}", v);
  if (a >= 99.995) return fmt::format("{:.1f}", v);
  if (a >= 9.9995) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3f}", v);
}

std::string format_duration_ms(double ms) {
  if (std::isfinite(ms) && std::fabs(ms) < 0.1) return fmt::format("{:.2f} µs", ms * 1e3);
  return format_fixed4(ms) + " ms";
}

std::string config_label(const Problem& p, const Knobs& knobs) {
  std::string s = p.shape_label() + " " + std::string(to_string(p.dtype)) + " " + p.mask_label();
  if (p.heads_kv != p.heads_q) s += " Hkv=" + std::to_string(p.heads_kv);
  if (p.seq_kv != p.seq_q) s += " Sk=" + std::to_string(p.seq_kv);
  if (p.head_dim_v != p.head_dim) s += " Dv=" + std::to_string(p.head_dim_v);
  if (p.varlen.active()) {  // the shape's Sq is the longest sequence
    s += " varlen ";
    s += std::to_string(p.total_q());
    s += " tok";
  }
  if (p.pass != Pass::fwd) {
    s += ' ';
    s += to_string(p.pass);
  }
  // 0 is "the kernel's traits choose" (fa2.mma, ffpa.l1): not a setting worth a column's width.
  for (const auto& [name, value] : knobs)
    if (value != 0) s += " " + name + "=" + std::to_string(value);
  return s;
}

std::string one_line(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (const char c : s) {
    const bool ws = c == '\n' || c == '\r' || c == '\t';
    if (ws) {
      if (!space) out += ' ';
      space = true;
    } else {
      out += c;
      space = false;
    }
  }
  return out;
}

namespace {
bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }
}  // namespace

std::size_t display_width(std::string_view utf8) {
  std::size_t n = 0;
  for (const char c : utf8)
    if (!continuation(c)) ++n;
  return n;
}

std::string shorten(std::string_view s, std::size_t width) {
  if (display_width(s) <= width) return std::string(s);
  if (width <= 3) return std::string(width, '.');
  // Keep width - 3 code points, then "...".
  std::size_t kept = 0, i = 0;
  for (; i < s.size(); ++i) {
    if (!continuation(s[i])) {
      if (kept == width - 3) break;
      ++kept;
    }
  }
  return std::string(s.substr(0, i)) + "...";
}

}  // namespace attn
