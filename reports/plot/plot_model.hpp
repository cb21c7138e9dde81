// The renderer-independent plot model: series, axes with linear/log10 scales, 1-2-5 nice ticks,
// the fixed palette, reference lines, and the data<->pixel Viewport with the zoom/pan/fit/hover
// helpers the GUI calls. Nothing here draws; plot_layout turns a Plot into a DrawList.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::plot {

struct Color {
  std::uint8_t r = 0, g = 0, b = 0, a = 255;
  friend bool operator==(const Color&, const Color&) = default;
};

// The fixed series palette, colour-blind safe: Okabe-Ito's blue, vermillion, bluish green,
// reddish purple, orange and sky blue, then Paul Tol's wine and olive (Okabe-Ito's black and
// yellow are left out: black reads as the frame, yellow vanishes on white). tab10, used before,
// repeated after ten series and its red/green pair is lost to deuteranopes.
inline constexpr std::size_t kPaletteSize = 8;
Color palette_color(std::size_t i);

// Marker shapes and dash patterns: with colour they tell 20+ series apart, in greyscale print too.
enum class Marker { circle, square, triangle_up, diamond, triangle_down, cross };
enum class Dash { solid, dashed, dotted, dash_dot };
inline constexpr std::size_t kMarkerCount = 6;
inline constexpr std::size_t kDashCount = 4;

struct SeriesStyle {
  Color color;
  Marker marker = Marker::circle;
  Dash dash = Dash::solid;
  friend bool operator==(const SeriesStyle&, const SeriesStyle&) = default;
};

// The style of series i: colour i % 8; the block k = i / 8 picks the dash (solid for the first
// eight) and shifts the marker, marker = (i % 8 + 2k) % 6 (a shift of 2, not 1, so the last of a
// block and the first of the next differ in marker too). Neighbours differ in colour and marker,
// and the (colour, marker, dash) triple repeats only after 96 series.
SeriesStyle series_style(std::size_t i);
// The on/off lengths of a dash pattern in units of the line width; empty for solid.
std::vector<float> dash_pattern(Dash d);
std::string_view to_string(Marker m);
std::string_view to_string(Dash d);

enum class Scale { linear, log10 };
enum class PlotKind { line, bars };

struct Range {
  double min = 0;
  double max = 1;
  double span() const { return max - min; }
  friend bool operator==(const Range&, const Range&) = default;
};

struct Tick {
  double value = 0;
  std::string label;  // empty for minor ticks (grid only)
  bool major = true;
};

// Ticks inside [lo, hi] at least `min_pixel_spacing` apart on an axis `pixel_length` long [px].
// Linear: multiples of a 1-2-5 step (the densest that keeps the spacing). Log10: decades, with
// 2 and 5 labelled when a decade is wide enough, or every 2nd/3rd/5th/10th decade when decades
// are too dense; unlabelled minor ticks at 2..9 x 10^k mark the log grid; a range narrower than
// a decade gets the linear 1-2-5 ticks. Labels come from format_tick.
std::vector<Tick> nice_ticks(double lo, double hi, Scale scale, double pixel_length,
                             double min_pixel_spacing);

// Compact tick label of `v` on a grid of `step`: "0", "0.5", "2.5", "128", "1k", "16k" (multiples
// of 1024 read as k too: 16384 -> "16k"), "1.5k", "2M", "1e-3", "2.5e-4".
std::string format_tick(double v, double step);

// The 1-2-5 number >= x (x > 0): 1, 2, 5, 10, 20, 50, ...
double nice_step_at_least(double x);

struct Axis {
  std::string label;  // "Sequence length"
  std::string unit;   // "tokens"; empty when unitless
  Scale scale = Scale::linear;
  Range range;           // the shown range when !auto_fit
  bool auto_fit = true;  // range follows the visible data (with padding) at layout time
  // Categorical axis (grouped bars): category i sits at x = i and is labelled categories[i].
  std::vector<std::string> categories;
  // When non-empty, ticks go exactly at these values (e.g. the swept sizes 512, 1k, 2k...),
  // thinned to every 2nd/4th... when they would crowd; otherwise nice_ticks.
  std::vector<double> data_ticks;
  std::string title() const;  // "Sequence length [tokens]"
};

struct Series {
  std::string label;  // "cudnn.sdpa fp16 causal"
  std::vector<double> x, y;
  Color color;
  bool visible = true;
  // The kernel variant the series measures (variant_label: id, or id@knob=v+...), with "@vN" for
  // version N of a watched kernel file.
  std::string kernel;
  // The case each point stands for (build_plot fills it; the GUI selects a case by clicking its
  // point), and the index of its run in build_plot's `runs`. Empty when not known.
  std::vector<std::string> case_ids;
  std::size_t run = 0;
  Marker marker = Marker::circle;
  Dash dash = Dash::solid;
  bool line = true;     // false: markers only (a roofline's cases are points, not a trend)
  bool markers = true;  // false: the line only (a roofline ceiling)
  // Hollow markers tell a second placement of the same cases apart (the roofline's L2 intensity).
  bool hollow = false;
  void set_style(const SeriesStyle& st) { color = st.color, marker = st.marker, dash = st.dash; }
};

// A horizontal reference (speedup = 1) or a vertical marker (a crossover threshold).
struct RefLine {
  double value = 0;
  std::string label;
  Color color{96, 96, 96, 255};
};

// Text at a data position (a roofline's ridge point), drawn with a small dot at the point.
struct Annotation {
  double x = 0, y = 0;
  std::string text;
  Color color{60, 60, 60, 255};
};

struct Plot {
  std::string title;
  std::string subtitle;  // the axes held fixed, e.g. "B=1, H=16, D=128, fp16, causal"
  Axis x, y;
  std::vector<Series> series;
  PlotKind kind = PlotKind::line;
  std::vector<RefLine> hlines;  // y = value across the plot
  std::vector<RefLine> vlines;  // x = value across the plot
  std::vector<Annotation> annotations;
  bool show_legend = true;
  std::vector<std::string> notes;  // what build_plot combined or dropped, for the CLI/GUI to show
  // The axes (plot_axes() names) whose values the series labels name, besides the kernel: what
  // varies between series. build_figure facets on one of them when there are too many.
  std::vector<std::string> series_axes;
};

// Data extent of the visible series (points the scale can show: > 0 on log) plus reference lines,
// padded by `pad_fraction` of the span on each side (in log space on log axes). Bars: x covers
// [-0.5, n-0.5] and y starts at 0 on a linear axis. An empty plot gets [0,1] or [1,10].
Range fit_x(const Plot& plot, double pad_fraction = 0.04);
Range fit_y(const Plot& plot, double pad_fraction = 0.06);
// The range layout will show: axis.range, or the fitted one when axis.auto_fit.
Range shown_x(const Plot& plot);
Range shown_y(const Plot& plot);

struct Vec2 {
  float x = 0, y = 0;
};
// Pixel rectangle, y grows downwards as on screen; (x0, y0) top-left.
struct Rect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float width() const { return x1 - x0; }
  float height() const { return y1 - y0; }
  bool contains(float px, float py) const { return px >= x0 && px <= x1 && py >= y0 && py <= y1; }
};

// Maps data to pixels inside `area` and back. Log axes map log10(value) linearly; values <= 0 on
// a log axis map to NaN.
struct Viewport {
  Rect area;
  Range x, y;
  Scale x_scale = Scale::linear, y_scale = Scale::linear;

  double to_px_x(double v) const;
  double to_px_y(double v) const;
  double from_px_x(double px) const;
  double from_px_y(double py) const;
};

Viewport make_viewport(const Plot& plot, const Rect& area);

// Which axes a zoom/pan acts on (the GUI: wheel over the plot = both, over an axis = that one).
enum class AxisMask { x = 1, y = 2, both = 3 };

// Zoom by `factor` (> 1 zooms in) keeping the data point under pixel (px, py) fixed.
Viewport zoom(const Viewport& v, double px, double py, double factor, AxisMask axes = AxisMask::both);
// Pan by a mouse drag of (dx, dy) pixels: the data under the cursor follows it.
Viewport pan(const Viewport& v, double dx_px, double dy_px, AxisMask axes = AxisMask::both);
// Double-click fit: the viewport over the plot's fitted data ranges, same area.
Viewport fit(const Viewport& v, const Plot& plot);
// Stores a zoomed/panned viewport back in the plot (auto_fit off), or restores auto_fit.
void apply_view(Plot& plot, const Viewport& v);
void reset_view(Plot& plot);

// Grouped bars: visible series j of k draws its bar for category i over
// [i + offset - width/2, i + offset + width/2] in x data units. Hidden series get width 0.
struct BarSlot {
  double offset = 0;
  double width = 0;
};
BarSlot bar_slot(const Plot& plot, std::size_t series);

struct PointHit {
  std::size_t series = 0;  // index into plot.series
  std::size_t index = 0;   // index into that series' x/y
  double x = 0, y = 0;     // data values
  double distance_px = 0;
};

// The visible point nearest to pixel (px, py) within `max_distance_px`, for the hover crosshair.
std::optional<PointHit> nearest_point(const Plot& plot, const Viewport& v, double px, double py,
                                      double max_distance_px);

}  // namespace attn::plot
