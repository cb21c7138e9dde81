// Plot model arithmetic: palette, nice ticks and their labels, fitted ranges, the Viewport
// transform and the zoom/pan/fit/nearest-point helpers.
#include "reports/plot/plot_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace attn::plot {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double to_t(double v, Scale s) {
  if (s == Scale::linear) return v;
  return v > 0 ? std::log10(v) : kNaN;
}
double from_t(double t, Scale s) { return s == Scale::linear ? t : std::pow(10.0, t); }

// Fixed-point text with `decimals`, trailing zeros (and a trailing '.') removed.
std::string fixed_trimmed(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, std::max(0, decimals));
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

// Decimals that show `v` on a grid of `step`; with no step, about 4 significant digits.
int decimals_for(double v, double step) {
  if (step > 0) return std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
  const double av = std::fabs(v);
  if (av == 0) return 0;
  return std::clamp(3 - static_cast<int>(std::floor(std::log10(av))), 0, 6);
}

std::vector<Tick> linear_ticks_with_step(double lo, double hi, double step) {
  std::vector<Tick> ticks;
  const double k0 = std::ceil(lo / step - 1e-9);
  const double k1 = std::floor(hi / step + 1e-9);
  for (double k = k0; k <= k1 && ticks.size() < 1000; k += 1) {
    double v = k * step;
    if (std::fabs(v) < step * 1e-9) v = 0;
    ticks.push_back({v, format_tick(v, step), true});
  }
  return ticks;
}

std::vector<Tick> linear_ticks(double lo, double hi, double pixel_length, double spacing) {
  const double span = hi - lo;
  const double want = pixel_length > 0 && spacing > 0 ? span * spacing / pixel_length : span / 5;
  return linear_ticks_with_step(lo, hi, nice_step_at_least(want));
}

// Narrower than a decade on a log axis: 1-2-5 linear steps, the smallest whose densest gap (at
// the top of the range, where log spacing shrinks) still keeps `spacing` pixels.
std::vector<Tick> log_narrow_ticks(double lo, double hi, double ppd, double spacing) {
  double step = nice_step_at_least((hi - lo) / 50);
  for (int i = 0; i < 64; ++i, step = nice_step_at_least(step * 1.5)) {
    std::vector<Tick> t = linear_ticks_with_step(lo, hi, step);
    if (t.size() < 2) return t;
    const double top = t.back().value;
    const double gap_px = std::log10(top / (top - step)) * ppd;
    if (gap_px >= spacing) return t;
  }
  return {};
}

std::vector<Tick> log_ticks(double lo, double hi, double pixel_length, double spacing) {
  if (!(lo > 0) || !(hi > lo)) return {};
  const double a = std::log10(lo), b = std::log10(hi);
  const double ppd = pixel_length / (b - a);  // [px per decade]
  const int k0 = static_cast<int>(std::ceil(a - 1e-9)), k1 = static_cast<int>(std::floor(b + 1e-9));
  auto inside = [&](double v) { return v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9); };
  std::vector<Tick> ticks;
  const bool with_25 = ppd * std::log10(2.0) >= spacing;  // 1->2 and 5->10 are the tightest gaps
  const bool minor = ppd * std::log10(10.0 / 9.0) >= 3;   // 9->10: the tightest minor gap
  int every = 1;
  if (ppd < spacing) {
    for (int n : {2, 3, 5, 10, 20, 50, 100}) {
      every = n;
      if (n * ppd >= spacing) break;
    }
  }
  for (int k = k0 - 1; k <= k1; ++k) {
    const double decade = std::pow(10.0, k);
    for (int m = 1; m <= 9; ++m) {
      const double v = m * decade;
      if (!inside(v)) continue;
      const bool labelled = m == 1 ? k % every == 0 : with_25 && (m == 2 || m == 5);
      if (labelled) {
        ticks.push_back({v, format_tick(v, decade), true});
      } else if (m == 1 ? ppd >= 3 : minor && every == 1) {
        ticks.push_back({v, "", false});
      }
    }
  }
  const auto majors = std::count_if(ticks.begin(), ticks.end(), [](const Tick& t) { return t.major; });
  if (majors < 2) return log_narrow_ticks(lo, hi, ppd, spacing);
  return ticks;
}

}  // namespace

Color palette_color(std::size_t i) {
  static constexpr std::array<Color, kPaletteSize> kPalette{{
      {0, 114, 178, 255},    // Okabe-Ito blue
      {213, 94, 0, 255},     // Okabe-Ito vermillion
      {0, 158, 115, 255},    // Okabe-Ito bluish green
      {204, 121, 167, 255},  // Okabe-Ito reddish purple
      {230, 159, 0, 255},    // Okabe-Ito orange
      {86, 180, 233, 255},   // Okabe-Ito sky blue
      {136, 34, 85, 255},    // Tol wine
      {153, 153, 51, 255},   // Tol olive
  }};
  return kPalette[i % kPaletteSize];
}

SeriesStyle series_style(std::size_t i) {
  const std::size_t c = i % kPaletteSize, k = i / kPaletteSize;
  return {palette_color(c), static_cast<Marker>((c + 2 * k) % kMarkerCount),
          static_cast<Dash>(k % kDashCount)};
}

std::vector<float> dash_pattern(Dash d) {
  switch (d) {
    case Dash::solid:
      return {};
    case Dash::dashed:
      return {4, 2.5f};
    case Dash::dotted:
      return {1, 1.8f};
    case Dash::dash_dot:
      return {4, 1.8f, 1, 1.8f};
  }
  return {};
}

std::string_view to_string(Marker m) {
  switch (m) {
    case Marker::circle:
      return "circle";
    case Marker::square:
      return "square";
    case Marker::triangle_up:
      return "triangle-up";
    case Marker::diamond:
      return "diamond";
    case Marker::triangle_down:
      return "triangle-down";
    case Marker::cross:
      return "cross";
  }
  return "circle";
}

std::string_view to_string(Dash d) {
  switch (d) {
    case Dash::solid:
      return "solid";
    case Dash::dashed:
      return "dashed";
    case Dash::dotted:
      return "dotted";
    case Dash::dash_dot:
      return "dash-dot";
  }
  return "solid";
}

double nice_step_at_least(double x) {
  if (!(x > 0) || !std::isfinite(x)) return 1;
  const double e = std::floor(std::log10(x));
  const double base = std::pow(10.0, e);
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * base >= x * (1 - 1e-12)) return m * base;
  return 10 * base;
}

std::string format_tick(double v, double step) {
  if (!std::isfinite(v)) return v != v ? "nan" : (v > 0 ? "inf" : "-inf");
  const double av = std::fabs(v);
  if (av == 0 || (step > 0 && av < step * 1e-6)) return "0";
  // Scientific only where fixed notation would need more than 4 decimals: 0.007 stays readable.
  if (av < 1e-3 || av >= 1e15 || (step > 0 && step < 1e-4)) {
    int e = static_cast<int>(std::floor(std::log10(av)));
    double m = v / std::pow(10.0, e);
    if (std::fabs(std::round(m * 100) / 100) >= 10) m /= 10, ++e;
    return fixed_trimmed(m, 2) + "e" + std::to_string(e);
  }
  if (av >= 1000) {
    static constexpr std::array<const char*, 5> kSuffix{"", "k", "M", "G", "T"};
    const int level = std::min(4, static_cast<int>(std::floor(std::log10(av) / 3 + 1e-12)));
    const double binary = std::pow(1024.0, level), decimal = std::pow(1000.0, level);
    // Sizes swept in powers of two read as 16k for 16384, as researchers say them.
    const double div = std::fmod(av, binary) == 0 && std::fmod(av, decimal) != 0 ? binary : decimal;
    const double scaled = v / div;
    const int d = step > 0 ? decimals_for(scaled, step / div) : decimals_for(scaled, 0);
    return fixed_trimmed(scaled, std::min(d, 3)) + kSuffix[static_cast<std::size_t>(level)];
  }
  return fixed_trimmed(v, decimals_for(v, step));
}

std::vector<Tick> nice_ticks(double lo, double hi, Scale scale, double pixel_length,
                             double min_pixel_spacing) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (lo > hi) std::swap(lo, hi);
  if (!(hi > lo)) return {};
  return scale == Scale::log10 ? log_ticks(lo, hi, pixel_length, min_pixel_spacing)
                               : linear_ticks(lo, hi, pixel_length, min_pixel_spacing);
}

std::string Axis::title() const { return unit.empty() ? label : label + " [" + unit + "]"; }

namespace {

struct Extent {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v, Scale s) {
    if (!std::isfinite(v) || (s == Scale::log10 && !(v > 0))) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
};

Range padded(Extent e, Scale s, double pad) {
  if (e.empty()) return s == Scale::log10 ? Range{1, 10} : Range{0, 1};
  double a = to_t(e.lo, s), b = to_t(e.hi, s);
  if (b - a < 1e-12 * std::max(1.0, std::fabs(a))) {
    const double half = s == Scale::log10 ? 0.3 : std::max(std::fabs(a) * 0.1, 0.5);
    a -= half, b += half;
  } else {
    const double p = (b - a) * pad;
    a -= p, b += p;
  }
  return {from_t(a, s), from_t(b, s)};
}

}  // namespace

Range fit_x(const Plot& plot, double pad_fraction) {
  if (plot.kind == PlotKind::bars) {
    double n = static_cast<double>(plot.x.categories.size());
    for (const Series& s : plot.series)
      for (double x : s.x) n = std::max(n, x + 1);
    return {-0.5, std::max(n, 1.0) - 0.5};
  }
  Extent e;
  for (const Series& s : plot.series)
    if (s.visible)
      for (double x : s.x) e.add(x, plot.x.scale);
  for (const RefLine& l : plot.vlines) e.add(l.value, plot.x.scale);
  for (const Annotation& an : plot.annotations) e.add(an.x, plot.x.scale);  // a labelled point is shown
  return padded(e, plot.x.scale, pad_fraction);
}

Range fit_y(const Plot& plot, double pad_fraction) {
  Extent e;
  for (const Series& s : plot.series)
    if (s.visible)
      for (double y : s.y) e.add(y, plot.y.scale);
  for (const RefLine& l : plot.hlines) e.add(l.value, plot.y.scale);
  for (const Annotation& an : plot.annotations) e.add(an.y, plot.y.scale);
  // A linear axis over non-negative data starts at 0, so bar and line heights compare honestly.
  if (plot.y.scale == Scale::linear && !e.empty() && e.lo >= 0) {
    e.lo = 0;
    Range r = padded(e, Scale::linear, pad_fraction);
    r.min = 0;
    return r;
  }
  return padded(e, plot.y.scale, pad_fraction);
}

Range shown_x(const Plot& plot) { return plot.x.auto_fit ? fit_x(plot) : plot.x.range; }
Range shown_y(const Plot& plot) { return plot.y.auto_fit ? fit_y(plot) : plot.y.range; }

double Viewport::to_px_x(double v) const {
  const double t0 = to_t(x.min, x_scale), t1 = to_t(x.max, x_scale);
  return area.x0 + (to_t(v, x_scale) - t0) / (t1 - t0) * area.width();
}
double Viewport::to_px_y(double v) const {
  const double t0 = to_t(y.min, y_scale), t1 = to_t(y.max, y_scale);
  return area.y1 - (to_t(v, y_scale) - t0) / (t1 - t0) * area.height();
}
double Viewport::from_px_x(double px) const {
  const double t0 = to_t(x.min, x_scale), t1 = to_t(x.max, x_scale);
  return from_t(t0 + (px - area.x0) / area.width() * (t1 - t0), x_scale);
}
double Viewport::from_px_y(double py) const {
  const double t0 = to_t(y.min, y_scale), t1 = to_t(y.max, y_scale);
  return from_t(t0 + (area.y1 - py) / area.height() * (t1 - t0), y_scale);
}

Viewport make_viewport(const Plot& plot, const Rect& area) {
  return {area, shown_x(plot), shown_y(plot), plot.x.scale, plot.y.scale};
}

namespace {

bool has(AxisMask m, AxisMask bit) { return (static_cast<int>(m) & static_cast<int>(bit)) != 0; }

Range zoom_range(Range r, Scale s, double anchor, double factor) {
  const double c = to_t(anchor, s), a = to_t(r.min, s), b = to_t(r.max, s);
  return {from_t(c - (c - a) / factor, s), from_t(c + (b - c) / factor, s)};
}

Range shift_range(Range r, Scale s, double dt) {
  return {from_t(to_t(r.min, s) + dt, s), from_t(to_t(r.max, s) + dt, s)};
}

}  // namespace

Viewport zoom(const Viewport& v, double px, double py, double factor, AxisMask axes) {
  if (!(factor > 0) || !std::isfinite(factor)) return v;
  Viewport out = v;
  if (has(axes, AxisMask::x)) out.x = zoom_range(v.x, v.x_scale, v.from_px_x(px), factor);
  if (has(axes, AxisMask::y)) out.y = zoom_range(v.y, v.y_scale, v.from_px_y(py), factor);
  return out;
}

Viewport pan(const Viewport& v, double dx_px, double dy_px, AxisMask axes) {
  Viewport out = v;
  if (has(axes, AxisMask::x) && v.area.width() > 0) {
    const double span = to_t(v.x.max, v.x_scale) - to_t(v.x.min, v.x_scale);
    out.x = shift_range(v.x, v.x_scale, -dx_px / v.area.width() * span);
  }
  if (has(axes, AxisMask::y) && v.area.height() > 0) {
    const double span = to_t(v.y.max, v.y_scale) - to_t(v.y.min, v.y_scale);
    out.y = shift_range(v.y, v.y_scale, dy_px / v.area.height() * span);
  }
  return out;
}

Viewport fit(const Viewport& v, const Plot& plot) {
  Viewport out = v;
  out.x = fit_x(plot);
  out.y = fit_y(plot);
  out.x_scale = plot.x.scale;
  out.y_scale = plot.y.scale;
  return out;
}

void apply_view(Plot& plot, const Viewport& v) {
  plot.x.range = v.x;
  plot.y.range = v.y;
  plot.x.auto_fit = plot.y.auto_fit = false;
}

void reset_view(Plot& plot) { plot.x.auto_fit = plot.y.auto_fit = true; }

BarSlot bar_slot(const Plot& plot, std::size_t series) {
  constexpr double kGroupWidth = 0.8;  // [category units] the rest is the gap between groups
  std::size_t visible = 0, rank = 0;
  for (std::size_t i = 0; i < plot.series.size(); ++i) {
    if (!plot.series[i].visible) continue;
    if (i < series) ++rank;
    ++visible;
  }
  if (series >= plot.series.size() || !plot.series[series].visible) return {0, 0};
  const double w = kGroupWidth / static_cast<double>(visible);
  return {-kGroupWidth / 2 + (static_cast<double>(rank) + 0.5) * w, w};
}

std::optional<PointHit> nearest_point(const Plot& plot, const Viewport& v, double px, double py,
                                      double max_distance_px) {
  std::optional<PointHit> best;
  for (std::size_t si = 0; si < plot.series.size(); ++si) {
    const Series& s = plot.series[si];
    if (!s.visible) continue;
    const double offset = plot.kind == PlotKind::bars ? bar_slot(plot, si).offset : 0;
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      const double dx = v.to_px_x(s.x[i] + offset) - px, dy = v.to_px_y(s.y[i]) - py;
      const double d = std::hypot(dx, dy);
      if (!std::isfinite(d) || d > max_distance_px) continue;
      if (!best || d < best->distance_px) best = PointHit{si, i, s.x[i], s.y[i], d};
    }
  }
  return best;
}

}  // namespace attn::plot
