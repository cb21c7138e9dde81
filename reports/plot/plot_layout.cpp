// layout_plot(): margins from the measured labels, ticks spaced by pixels, grid, reference lines,
// series (lines with markers, or grouped bars), frame, titles and a legend placed in the corner
// that hides the fewest points.
#include "reports/plot/plot_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "reports/plot/series_draw.hpp"

namespace attn::plot {

namespace {

// About 4 significant digits, no exponent between 1e-3 and 1e7: hover and bar value labels.
std::string value_text(double v, int significant = 4) {
  if (!std::isfinite(v)) return v != v ? "nan" : (v > 0 ? "inf" : "-inf");
  const double av = std::fabs(v);
  if (av != 0 && (av < 1e-3 || av >= 1e7)) return fmt::format("{:.{}e}", v, significant - 1);
  const int mag = av == 0 ? 0 : static_cast<int>(std::floor(std::log10(av)));
  std::string s = fmt::format("{:.{}f}", v, std::max(0, significant - 1 - mag));
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

void dashed(DrawList& d, Vec2 a, Vec2 b, Color c, float thickness, float dash, float gap) {
  const float len = std::hypot(b.x - a.x, b.y - a.y);
  if (!(len > 0)) return;
  const float ux = (b.x - a.x) / len, uy = (b.y - a.y) / len;
  for (float t = 0; t < len; t += dash + gap) {
    const float e = std::min(len, t + dash);
    d.line({a.x + ux * t, a.y + uy * t}, {a.x + ux * e, a.y + uy * e}, c, thickness);
  }
}

struct AxisTicks {
  std::vector<Tick> ticks;
  float max_label_width = 0;
};

float widest(const std::vector<Tick>& ticks, const TextMeasurer& fonts, float px) {
  float w = 0;
  for (const Tick& t : ticks)
    if (t.major) w = std::max(w, fonts.text_width(t.label, px, false));
  return w;
}

// Every n-th of `ticks` (n = 1, 2, 4, ...) so labelled neighbours are `need(i, j)` pixels apart.
template <class Gap>
std::vector<Tick> thinned(const std::vector<Tick>& ticks, Gap gap_ok) {
  for (std::size_t every = 1; every <= std::max<std::size_t>(1, ticks.size()); every *= 2) {
    std::vector<Tick> out;
    for (std::size_t i = 0; i < ticks.size(); i += every) out.push_back(ticks[i]);
    bool ok = true;
    for (std::size_t i = 1; i < out.size() && ok; ++i) ok = gap_ok(out[i - 1], out[i]);
    if (ok) return out;
  }
  return ticks.empty() ? ticks : std::vector<Tick>{ticks.front()};
}

AxisTicks x_ticks(const Plot& plot, const Viewport& vp, const TextMeasurer& fonts, const Style& st) {
  const float px = st.s(st.font_px), min_gap = st.s(12);
  auto gap_ok = [&](const Tick& a, const Tick& b) {
    const double dist = std::fabs(vp.to_px_x(b.value) - vp.to_px_x(a.value));
    return dist >=
           (fonts.text_width(a.label, px, false) + fonts.text_width(b.label, px, false)) / 2 + min_gap;
  };
  std::vector<Tick> ticks;
  if (!plot.x.categories.empty()) {
    for (std::size_t i = 0; i < plot.x.categories.size(); ++i) {
      const double v = static_cast<double>(i);
      if (v >= vp.x.min && v <= vp.x.max) ticks.push_back({v, plot.x.categories[i], true});
    }
    ticks = thinned(ticks, gap_ok);
  } else if (!plot.x.data_ticks.empty()) {
    for (double v : plot.x.data_ticks)
      if (v >= vp.x.min && v <= vp.x.max) ticks.push_back({v, format_tick(v, 0), true});
    ticks = thinned(ticks, gap_ok);
  } else {
    float spacing = st.s(st.min_tick_spacing_x);
    for (int attempt = 0; attempt < 6; ++attempt, spacing *= 1.5f) {
      ticks = nice_ticks(vp.x.min, vp.x.max, vp.x_scale, vp.area.width(), spacing);
      std::vector<Tick> majors;
      for (const Tick& t : ticks)
        if (t.major) majors.push_back(t);
      bool ok = true;
      for (std::size_t i = 1; i < majors.size() && ok; ++i) ok = gap_ok(majors[i - 1], majors[i]);
      if (ok) break;
    }
  }
  return {ticks, widest(ticks, fonts, px)};
}

AxisTicks y_ticks(const Plot& plot, const Viewport& vp, const TextMeasurer& fonts, const Style& st) {
  std::vector<Tick> ticks;
  if (!plot.y.data_ticks.empty()) {
    for (double v : plot.y.data_ticks)
      if (v >= vp.y.min && v <= vp.y.max) ticks.push_back({v, format_tick(v, 0), true});
    ticks = thinned(ticks, [&](const Tick& a, const Tick& b) {
      return std::fabs(vp.to_px_y(b.value) - vp.to_px_y(a.value)) >= st.s(st.min_tick_spacing_y);
    });
  } else {
    ticks = nice_ticks(vp.y.min, vp.y.max, vp.y_scale, vp.area.height(), st.s(st.min_tick_spacing_y));
  }
  return {ticks, widest(ticks, fonts, st.s(st.font_px))};
}

bool finite_px(double a, double b) { return std::isfinite(a) && std::isfinite(b); }

// The rectangle of the bar of series `si` at point `i` [px].
std::optional<Rect> bar_rect(const Plot& plot, const Viewport& vp, std::size_t si, std::size_t i) {
  const Series& s = plot.series[si];
  const BarSlot slot = bar_slot(plot, si);
  if (slot.width <= 0) return std::nullopt;
  const double x0 = vp.to_px_x(s.x[i] + slot.offset - slot.width / 2);
  const double x1 = vp.to_px_x(s.x[i] + slot.offset + slot.width / 2);
  const double base = vp.y_scale == Scale::log10 || vp.y.min > 0 ? vp.y.min : std::min(0.0, vp.y.max);
  const double yb = vp.to_px_y(base), yv = vp.to_px_y(s.y[i]);
  if (!finite_px(x0, x1) || !finite_px(yb, yv)) return std::nullopt;
  return Rect{static_cast<float>(x0), static_cast<float>(std::min(yb, yv)), static_cast<float>(x1),
              static_cast<float>(std::max(yb, yv))};
}

void draw_series(DrawList& d, const Plot& plot, const Viewport& vp, const TextMeasurer& fonts,
                 const Style& st) {
  for (std::size_t si = 0; si < plot.series.size(); ++si) {
    const Series& s = plot.series[si];
    if (!s.visible) continue;
    const std::size_t n = std::min(s.x.size(), s.y.size());
    if (plot.kind == PlotKind::bars) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto r = bar_rect(plot, vp, si, i);
        if (!r) continue;
        d.rect_filled(*r, s.color);
        const std::string label = value_text(s.y[i], 3);
        const float lpx = st.s(st.font_px * 0.8f), lw = fonts.text_width(label, lpx, false);
        if (lw + st.s(2) <= r->width())
          d.text({(r->x0 + r->x1 - lw) / 2, r->y0 - lpx - st.s(2)}, label, st.muted_text, lpx);
      }
      continue;
    }
    std::vector<Vec2> run;
    auto flush = [&] {
      if (s.line && run.size() >= 2) stroke_dashed(d, run, s.color, st.s(st.line_px), s.dash);
      run.clear();
    };
    for (std::size_t i = 0; i < n; ++i) {
      const double px = vp.to_px_x(s.x[i]), py = vp.to_px_y(s.y[i]);
      if (!finite_px(px, py)) {
        flush();
        continue;
      }
      run.push_back({static_cast<float>(px), static_cast<float>(py)});
    }
    flush();
    // Points-only series (a roofline) get larger markers: they carry the whole message. On a line,
    // markers closer than a few radii would merge into a blob that hides the shape telling series
    // apart (and cost a polygon per point per frame in the GUI): such a marker is left out, the line
    // still passes through its point.
    const float r = st.s(st.marker_radius * (s.line ? 1.0f : 1.35f));
    const float min_gap = s.line ? 2.5f * r : 0.0f;
    std::optional<Vec2> last;
    for (std::size_t i = 0; i < n && s.markers; ++i) {
      const double px = vp.to_px_x(s.x[i]), py = vp.to_px_y(s.y[i]);
      if (!finite_px(px, py)) continue;
      const Vec2 c{static_cast<float>(px), static_cast<float>(py)};
      if (last && std::hypot(c.x - last->x, c.y - last->y) < min_gap) continue;
      draw_marker(d, c, r, s.marker, s.color, s.hollow, st.s(1.5f));
      last = c;
    }
  }
}

struct LegendSize {
  float w = 0, h = 0, row = 0, inner = 0, swatch = 0, px = 0;
  float col_w = 0, col_gap = 0;  // one column's width (swatch + label) and the gap between columns
  std::size_t rows = 0;          // entries per column
  std::size_t entries = 0;       // series + labelled reference lines
};

// The legend's box for `max_rows` entries per column (as many columns as that takes).
LegendSize legend_size(const Plot& plot, const TextMeasurer& fonts, const Style& st,
                       std::size_t max_rows = SIZE_MAX) {
  LegendSize ls;
  ls.px = st.s(st.font_px);
  ls.row = st.s(st.font_px * 1.45f);
  ls.inner = st.s(8);
  ls.swatch = st.s(26);
  ls.col_gap = st.s(14);
  float label_w = 0;
  ls.entries = plot.series.size();
  for (const Series& s : plot.series) label_w = std::max(label_w, fonts.text_width(s.label, ls.px, false));
  for (const RefLine& l : plot.hlines)
    if (!l.label.empty()) label_w = std::max(label_w, fonts.text_width(l.label, ls.px, false)), ++ls.entries;
  ls.rows = std::max<std::size_t>(1, std::min(ls.entries, max_rows));
  const std::size_t cols = (ls.entries + ls.rows - 1) / ls.rows;
  ls.col_w = ls.swatch + st.s(6) + label_w;
  ls.w = ls.inner * 2 + ls.col_w * static_cast<float>(cols) + ls.col_gap * static_cast<float>(cols - 1);
  ls.h = ls.inner * 2 + ls.row * static_cast<float>(ls.rows) - (ls.row - ls.px);
  return ls;
}

// Entries per column that fit `height` [px].
std::size_t rows_fitting(const LegendSize& one, float height) {
  const float n = (height - one.inner * 2 + (one.row - one.px)) / one.row;
  return n < 1 ? 1 : static_cast<std::size_t>(n);
}

// How much of the data a legend box at `box` would hide: points, samples along line segments,
// and bars it overlaps.
std::size_t hidden_by(const Plot& plot, const Viewport& vp, const Rect& box) {
  std::size_t hidden = 0;
  for (std::size_t si = 0; si < plot.series.size(); ++si) {
    const Series& s = plot.series[si];
    if (!s.visible) continue;
    const std::size_t n = std::min(s.x.size(), s.y.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (plot.kind == PlotKind::bars) {
        const auto r = bar_rect(plot, vp, si, i);
        if (r && r->x1 >= box.x0 && r->x0 <= box.x1 && r->y0 <= box.y1 && r->y1 >= box.y0) ++hidden;
        continue;
      }
      const double x = vp.to_px_x(s.x[i]), y = vp.to_px_y(s.y[i]);
      if (!finite_px(x, y)) continue;
      if (box.contains(static_cast<float>(x), static_cast<float>(y))) hidden += 4;  // a marker hides more
      if (i + 1 == n || !s.line) continue;
      const double x2 = vp.to_px_x(s.x[i + 1]), y2 = vp.to_px_y(s.y[i + 1]);
      if (!finite_px(x2, y2)) continue;
      for (int k = 1; k < 16; ++k) {
        const double t = k / 16.0;
        if (box.contains(static_cast<float>(x + (x2 - x) * t), static_cast<float>(y + (y2 - y) * t)))
          ++hidden;
      }
    }
  }
  return hidden;
}

// Matplotlib's "best": the inner corner hiding the least data. Returns the box and what it hides.
std::pair<Rect, std::size_t> best_corner(const Plot& plot, const PlotLayout& out, const LegendSize& ls,
                                         const Style& st) {
  const Rect& a = out.plot_area;
  const float inset = st.s(8), w = ls.w, h = ls.h;
  const std::array<Rect, 4> corners{{
      {a.x0 + inset, a.y0 + inset, a.x0 + inset + w, a.y0 + inset + h},  // top-left
      {a.x1 - inset - w, a.y0 + inset, a.x1 - inset, a.y0 + inset + h},  // top-right
      {a.x1 - inset - w, a.y1 - inset - h, a.x1 - inset, a.y1 - inset},  // bottom-right
      {a.x0 + inset, a.y1 - inset - h, a.x0 + inset + w, a.y1 - inset},  // bottom-left
  }};
  std::size_t best = 0, best_hidden = SIZE_MAX;
  for (std::size_t c = 0; c < corners.size(); ++c) {
    const std::size_t hidden = hidden_by(plot, out.viewport, corners[c]);
    if (hidden < best_hidden) best = c, best_hidden = hidden;
  }
  return {corners[best], best_hidden};
}

void draw_legend(PlotLayout& out, const Plot& plot, const Rect& box, const LegendSize& ls, const Style& st) {
  out.legend_box = box;
  DrawList& d = out.draw;
  d.rect_filled(box, st.legend_background);
  d.rect_outline(box, st.legend_border, st.s(1));
  const float px = ls.px, row = ls.row, swatch = ls.swatch;
  auto slot = [&](std::size_t i) {
    const float left = box.x0 + ls.inner + (ls.col_w + ls.col_gap) * static_cast<float>(i / ls.rows);
    const float top = box.y0 + ls.inner + row * static_cast<float>(i % ls.rows);
    return Vec2{left, top};
  };
  for (std::size_t si = 0; si < plot.series.size(); ++si) {
    const Series& s = plot.series[si];
    const Vec2 at = slot(si);
    const float cy = at.y + px / 2, x0 = at.x;
    const Color c = s.visible ? s.color : st.hidden_series;
    if (plot.kind == PlotKind::bars) {
      d.rect_filled({x0 + swatch * 0.2f, cy - px * 0.35f, x0 + swatch * 0.8f, cy + px * 0.35f}, c);
    } else {
      if (s.line) stroke_dashed(d, {{x0, cy}, {x0 + swatch, cy}}, c, st.s(st.line_px), s.dash);
      if (s.markers)
        draw_marker(d, {x0 + swatch / 2, cy}, st.s(st.marker_radius * (s.line ? 1.0f : 1.35f)), s.marker, c,
                    s.hollow, st.s(1.5f));
    }
    d.text({x0 + swatch + st.s(6), at.y}, s.label, s.visible ? st.text : st.hidden_series, px);
    out.legend.push_back({si, Rect{x0 - ls.inner / 2, at.y - (row - px) / 2, x0 + ls.col_w + ls.inner / 2,
                                   at.y + px + (row - px) / 2}});
  }
  // Labelled reference lines follow the series, with a dashed swatch.
  std::size_t r = plot.series.size();
  for (const RefLine& l : plot.hlines) {
    if (l.label.empty()) continue;
    const Vec2 at = slot(r++);
    const float cy = at.y + px / 2, x0 = at.x;
    dashed(d, {x0, cy}, {x0 + swatch, cy}, l.color, st.s(1.5f), st.s(6), st.s(3));
    d.text({x0 + swatch + st.s(6), at.y}, l.label, st.text, px);
  }
}

}  // namespace

Style default_style(int width, int height) {
  Style st;
  st.scale =
      std::max(0.6f, std::min(static_cast<float>(width) / 800.0f, static_cast<float>(height) / 500.0f));
  return st;
}

namespace {

// Everything but the legend; `reserve_right` / `reserve_bottom` [px] are kept free right of and
// below the plot area (with its tick labels and axis title) for a legend outside the data.
PlotLayout layout_pass(const Plot& plot, float width, float height, const TextMeasurer& fonts,
                       const Style& st, Vec2 origin, float reserve_right, float reserve_bottom = 0) {
  PlotLayout out;
  DrawList& d = out.draw;
  const float fpx = st.s(st.font_px), tpx = st.s(st.title_px), apx = st.s(st.axis_title_px);
  const float pad = st.s(st.pad), tick = st.s(st.tick_length), gap = st.s(4);
  d.rect_filled({origin.x, origin.y, origin.x + width, origin.y + height}, st.background);

  float top = origin.y + pad;
  const float title_y = top;
  if (!plot.title.empty()) top += tpx * 1.3f;
  const float subtitle_y = top;
  if (!plot.subtitle.empty()) top += fpx * 1.3f;
  top += st.s(6);
  float bottom = origin.y + height - pad - reserve_bottom;
  const float x_title_y = bottom - apx;
  if (!plot.x.title().empty()) bottom -= apx * 1.35f;
  bottom -= fpx + tick + gap;
  const float x_labels_y = bottom + tick + gap;

  // Vertical extent first: the y ticks (and so the left margin) depend on the plot height.
  Viewport vp = make_viewport(plot, {origin.x, top, origin.x + width, bottom});
  const AxisTicks yt = y_ticks(plot, vp, fonts, st);
  float left = origin.x + pad;
  if (!plot.y.title().empty()) left += apx * 1.35f;
  left += yt.max_label_width + tick + gap;
  const float right = origin.x + width - pad - st.s(14) - reserve_right;
  out.plot_area = {left, top, std::max(left + 1, right), std::max(top + 1, bottom)};
  vp.area = out.plot_area;
  out.viewport = vp;
  const AxisTicks xt = x_ticks(plot, vp, fonts, st);
  const Rect& a = out.plot_area;

  d.rect_filled(a, st.plot_background);
  // Grid: minor first so major lines draw over them.
  for (bool major : {false, true}) {
    const Color c = major ? st.grid_major : st.grid_minor;
    if (plot.x.categories.empty())
      for (const Tick& t : xt.ticks) {
        const double x = vp.to_px_x(t.value);
        if (t.major == major && std::isfinite(x))
          d.line({static_cast<float>(x), a.y0}, {static_cast<float>(x), a.y1}, c, st.s(1));
      }
    for (const Tick& t : yt.ticks) {
      const double y = vp.to_px_y(t.value);
      if (t.major == major && std::isfinite(y))
        d.line({a.x0, static_cast<float>(y)}, {a.x1, static_cast<float>(y)}, c, st.s(1));
    }
  }

  d.push_clip(a);
  draw_series(d, plot, vp, fonts, st);
  // Reference lines over the series (a bar must not hide speedup = 1), labels on a backing box.
  const float lpx = st.s(st.font_px * 0.85f);
  auto label_box = [&](Vec2 tl, const std::string& text, Color c) {
    const float w = fonts.text_width(text, lpx, false);
    d.rect_filled({tl.x - st.s(3), tl.y - st.s(1), tl.x + w + st.s(3), tl.y + lpx + st.s(2)},
                  st.legend_background);
    d.text(tl, text, c, lpx);
  };
  for (const RefLine& l : plot.hlines) {
    const double y = vp.to_px_y(l.value);
    if (!std::isfinite(y) || y < a.y0 || y > a.y1) continue;
    const auto fy = static_cast<float>(y);
    dashed(d, {a.x0, fy}, {a.x1, fy}, l.color, st.s(1.5f), st.s(6), st.s(4));
    // Its label goes into the legend: inline, it would sit on a bar or a line.
  }
  for (const RefLine& l : plot.vlines) {
    const double x = vp.to_px_x(l.value);
    if (!std::isfinite(x) || x < a.x0 || x > a.x1) continue;
    const auto fx = static_cast<float>(x);
    dashed(d, {fx, a.y0}, {fx, a.y1}, l.color, st.s(1.5f), st.s(6), st.s(4));
    if (!l.label.empty()) label_box({fx + st.s(5), a.y0 + st.s(5)}, l.label, l.color);
  }
  // Annotations (ridge points): a dot, and the text in the first of above-right, above-left,
  // below-right, below-left of it that stays in the plot area and clear of earlier labels (two
  // ridges of near bandwidths sit close together).
  std::vector<Rect> placed;
  for (const Annotation& an : plot.annotations) {
    const double x = vp.to_px_x(an.x), y = vp.to_px_y(an.y);
    if (!finite_px(x, y)) continue;
    const auto fx = static_cast<float>(x), fy = static_cast<float>(y);
    d.circle_filled({fx, fy}, st.s(3), an.color);
    const float w = fonts.text_width(an.text, lpx, false), h = lpx + st.s(3), off = st.s(6);
    const std::array<Vec2, 4> tries{{{fx + off, fy - h - off},
                                     {fx - off - w, fy - h - off},
                                     {fx + off, fy + off},
                                     {fx - off - w, fy + off}}};
    // Inside and clear, else inside (overlapping a label beats being clipped away), else the first.
    Vec2 at = tries[0];
    int best = 0;
    for (const Vec2& t : tries) {
      const Rect r{t.x - st.s(3), t.y - st.s(1), t.x + w + st.s(3), t.y + h};
      const bool inside = r.x0 >= a.x0 && r.x1 <= a.x1 && r.y0 >= a.y0 && r.y1 <= a.y1;
      const bool clear = std::none_of(placed.begin(), placed.end(), [&](const Rect& q) {
        return r.x0 < q.x1 && r.x1 > q.x0 && r.y0 < q.y1 && r.y1 > q.y0;
      });
      const int score = inside ? (clear ? 2 : 1) : 0;
      if (score > best) best = score, at = t;
      if (score == 2) break;
    }
    placed.push_back({at.x - st.s(3), at.y - st.s(1), at.x + w + st.s(3), at.y + h});
    label_box(at, an.text, an.color);
  }
  d.pop_clip();
  d.rect_outline(a, st.frame, st.s(1));

  for (const Tick& t : xt.ticks) {
    const double x = vp.to_px_x(t.value);
    if (!std::isfinite(x)) continue;
    const auto fx = static_cast<float>(x);
    d.line({fx, a.y1}, {fx, a.y1 + (t.major ? tick : tick * 0.6f)}, st.frame, st.s(1));
    if (t.major && !t.label.empty())
      d.text({fx - fonts.text_width(t.label, fpx, false) / 2, x_labels_y}, t.label, st.text, fpx);
  }
  for (const Tick& t : yt.ticks) {
    const double y = vp.to_px_y(t.value);
    if (!std::isfinite(y)) continue;
    const auto fy = static_cast<float>(y);
    d.line({a.x0 - (t.major ? tick : tick * 0.6f), fy}, {a.x0, fy}, st.frame, st.s(1));
    if (t.major && !t.label.empty())
      d.text({a.x0 - tick - gap - fonts.text_width(t.label, fpx, false), fy - fpx / 2}, t.label, st.text,
             fpx);
  }

  const std::string xtitle = plot.x.title(), ytitle = plot.y.title();
  if (!xtitle.empty())
    d.text({(a.x0 + a.x1 - fonts.text_width(xtitle, apx, false)) / 2, x_title_y}, xtitle, st.text, apx);
  if (!ytitle.empty()) {
    const float len = fonts.text_width(ytitle, apx, false);
    d.text({origin.x + pad, (a.y0 + a.y1 - len) / 2}, ytitle, st.text, apx, false, true);
  }
  // Titles centre over the plot area, shifted (not clipped) to stay inside the image when they are
  // wider than the room on the plot area's left, which the legend column makes narrow.
  const auto centred = [&](float w) {
    return std::max(origin.x + pad, std::min((a.x0 + a.x1 - w) / 2, origin.x + width - pad - w));
  };
  if (!plot.title.empty())
    d.text({centred(fonts.text_width(plot.title, tpx, true)), title_y}, plot.title, st.text, tpx, true);
  if (!plot.subtitle.empty())
    d.text({centred(fonts.text_width(plot.subtitle, fpx, false)), subtitle_y}, plot.subtitle, st.muted_text,
           fpx);
  return out;
}

}  // namespace

PlotLayout layout_plot(const Plot& plot, float width, float height, const TextMeasurer& fonts,
                       const Style& st, Vec2 origin) {
  PlotLayout out = layout_pass(plot, width, height, fonts, st, origin, 0);
  if (!plot.show_legend || plot.series.empty()) return out;
  // Inside, in the corner hiding no data, when one column fits the plot's height.
  const LegendSize one = legend_size(plot, fonts, st);
  const float inset = st.s(8);
  if (one.h + 2 * inset <= out.plot_area.height()) {
    const auto [box, hidden] = best_corner(plot, out, one, st);
    if (hidden == 0) {
      draw_legend(out, plot, box, one, st);
      return out;
    }
  }
  // Else outside, never over the data: right of the plot in as many columns as its height needs,
  // when that leaves the plot most of the width; otherwise below it, in columns across the width.
  const LegendSize right = legend_size(plot, fonts, st, rows_fitting(one, out.plot_area.height()));
  const float reserve = right.w + st.s(14);
  if (reserve <= 0.38f * width) {
    out = layout_pass(plot, width, height, fonts, st, origin, reserve);
    const float x0 = out.plot_area.x1 + st.s(14);
    draw_legend(out, plot, {x0, out.plot_area.y0, x0 + right.w, out.plot_area.y0 + right.h}, right, st);
    return out;
  }
  const float usable = width - 2 * st.s(st.pad);
  const auto cols = static_cast<std::size_t>(
      std::max(1.0f, std::floor((usable - one.inner * 2 + one.col_gap) / (one.col_w + one.col_gap))));
  const LegendSize below = legend_size(plot, fonts, st, (one.entries + cols - 1) / cols);
  // A small panel (a facet) whose legend would leave the data less than a third of its height
  // shows no legend: hover names each point's series, and the other panels' legends the styles.
  const PlotLayout with_below = layout_pass(plot, width, height, fonts, st, origin, 0, below.h + st.s(8));
  if (with_below.plot_area.height() < height / 3) return out;
  out = with_below;
  const float x0 = origin.x + std::max(st.s(st.pad), (width - below.w) / 2);
  const float y0 = origin.y + height - st.s(st.pad) - below.h;
  draw_legend(out, plot, {x0, y0, x0 + below.w, y0 + below.h}, below, st);
  return out;
}

void append_hover(DrawList& d, const Plot& plot, const PlotLayout& layout, const PointHit& hit,
                  const TextMeasurer& fonts, const Style& st) {
  if (hit.series >= plot.series.size()) return;
  const Series& s = plot.series[hit.series];
  const Viewport& vp = layout.viewport;
  const Rect& a = layout.plot_area;
  const double offset = plot.kind == PlotKind::bars ? bar_slot(plot, hit.series).offset : 0;
  const double px = vp.to_px_x(hit.x + offset), py = vp.to_px_y(hit.y);
  if (!finite_px(px, py)) return;
  const auto fx = static_cast<float>(px), fy = static_cast<float>(py);
  d.push_clip(a);
  dashed(d, {fx, a.y0}, {fx, a.y1}, st.muted_text, st.s(1), st.s(4), st.s(3));
  dashed(d, {a.x0, fy}, {a.x1, fy}, st.muted_text, st.s(1), st.s(4), st.s(3));
  d.cmds.emplace_back(DrawCircle{{fx, fy}, st.s(st.marker_radius + 3), s.color, false, st.s(2)});
  d.pop_clip();

  std::string xs = value_text(hit.x);
  if (!plot.x.categories.empty() && hit.x >= 0 && hit.x < static_cast<double>(plot.x.categories.size()))
    xs = plot.x.categories[static_cast<std::size_t>(hit.x)];
  const std::string line1 = s.label;
  const std::string line2 =
      fmt::format("{} = {}{}{}, {} = {}{}{}", plot.x.label, xs, plot.x.unit.empty() ? "" : " ", plot.x.unit,
                  plot.y.label, value_text(hit.y), plot.y.unit.empty() ? "" : " ", plot.y.unit);
  const float fpx = st.s(st.font_px), inner = st.s(6);
  const float w =
      std::max(fonts.text_width(line1, fpx, true), fonts.text_width(line2, fpx, false)) + 2 * inner;
  const float h = fpx * 2.4f + 2 * inner;
  float bx = fx + st.s(12), by = fy - h - st.s(12);
  if (bx + w > a.x1) bx = fx - st.s(12) - w;
  if (by < a.y0) by = fy + st.s(12);
  const Rect box{bx, by, bx + w, by + h};
  d.rect_filled(box, st.legend_background);
  d.rect_outline(box, s.color, st.s(1));
  d.text({bx + inner, by + inner}, line1, st.text, fpx, true);
  d.text({bx + inner, by + inner + fpx * 1.4f}, line2, st.text, fpx);
}

}  // namespace attn::plot
