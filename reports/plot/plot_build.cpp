// build_plot(): axis and metric tables, grouping of ok cases into series, baseline speedups, the
// generated title/subtitle and the default file name.
#include "reports/plot/plot_build.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "profiling/field_catalogue.hpp"
#include "reports/case_query.hpp"
#include "reports/plot/plot_axes.hpp"
#include "reports/plot/units.hpp"

namespace attn::plot {

namespace {

// Axes a series may split on when --group-by is not given, in label order. Derived axes
// (tokens, hidden, seq, causal, window) are covered by these.
// "pass" splits forward from backward points of one problem; a single pass adds no split.
// "device" splits a run measured on several kinds of GPU (issue 22); one kind adds no split.
const std::vector<std::string> kDefaultSplitAxes{"batch",  "heads",    "heads_kv",   "seq_q",
                                                 "seq_kv", "head_dim", "head_dim_v", "dtype",
                                                 "mask",   "pass",     "knobs",      "device"};

std::string joined(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// Every numeric measurement of a case by name (the y names besides latency and speedup): the
// field catalogue's plot rows (label, unit and direction come from there too), then the
// --metrics extras, which plot under their own name, higher = better.
std::map<std::string, double> case_values(const CaseResult& c) {
  std::map<std::string, double> m;
  for (const FieldDesc& f : case_fields())
    if (f.plot)
      if (const auto v = plot_value(f, c)) m[std::string(f.name)] = *v;
  if (c.metrics)
    for (const auto& [name, value] : c.metrics->aggregate.extra)
      if (std::isfinite(value)) m[name] = value;
  return m;
}

std::string gpu_name(const RunInfo& run) {
  if (run.backend == "cpu" || !run.gpu || run.gpu->name.empty()) return "CPU";
  return run.gpu->name;
}

std::string lower_first(std::string s) {
  // "Sequence length" -> "sequence length", but keep acronyms such as "KV heads".
  if (s.size() > 1 && std::isupper(static_cast<unsigned char>(s[0])) &&
      !std::isupper(static_cast<unsigned char>(s[1])))
    s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

struct Point {
  std::size_t run = 0;
  const CaseResult* c = nullptr;
  double y = 0;
};

// PlotSpec::kernels and PlotSpec::where, checked against every case of the runs (any status), so
// a typo is an error rather than an empty or silently partial figure.
class CaseFilter {
 public:
  CaseFilter(const std::vector<LoadedRun>& runs, const PlotSpec& spec) {
    std::set<std::string> kernels;
    for (const LoadedRun& r : runs)
      for (const CaseResult& c : r.cases) kernels.insert(c.kernel), kernels.insert(variant_label(c));
    for (const std::string& k : spec.kernels) {
      if (!kernels.contains(k))
        throw PlotSpecError("--kernels " + k + ": no case of that kernel in these results; kernels there: " +
                            (kernels.empty() ? "none" : joined({kernels.begin(), kernels.end()})));
      m_kernels.insert(k);
    }
    for (const std::string& w : spec.where) {
      const auto eq = w.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == w.size())
        throw PlotSpecError("--where " + w +
                            ": expected AXIS=VALUE, e.g. head_dim=128, causal=1 or mask=full");
      const std::string name = w.substr(0, eq);
      std::string value = w.substr(eq + 1);
      const AxisDef* a = find_axis(name);
      if (!a)
        throw PlotSpecError("--where " + w + ": unknown axis " + name + "; allowed: " + joined(plot_axes()));
      if (name == "causal" && (value == "1" || value == "true")) value = "causal";
      if (name == "causal" && (value == "0" || value == "false")) value = "non-causal";
      std::set<std::string> texts;
      std::set<long long> numbers;
      for (const LoadedRun& r : runs)
        for (const CaseResult& c : r.cases) {
          if (a->number)
            numbers.insert(static_cast<long long>(a->number(c)));
          else
            texts.insert(a->text(c));
        }
      if (!(a->number ? numbers.contains(parse_number(w, value)) : texts.contains(value))) {
        std::vector<std::string> have;
        for (long long n : numbers) have.push_back(std::to_string(n));
        have.insert(have.end(), texts.begin(), texts.end());
        throw PlotSpecError("--where " + w + ": no case in these results has " + name + " " + value +
                            "; values there: " + (have.empty() ? "none" : joined(have)));
      }
      if (a->number) value = std::to_string(parse_number(w, value));  // "0128" -> "128"
      auto it = std::find_if(m_where.begin(), m_where.end(), [&](const auto& e) { return e.first == a; });
      if (it == m_where.end()) {
        m_where.emplace_back(a, std::set<std::string>{});
        it = std::prev(m_where.end());
      }
      it->second.insert(value);
    }
  }

  bool keeps(const CaseResult& c) const {
    // A kernel id keeps all its variants; a variant label ("fa2.mma@br=64") keeps that one.
    if (!m_kernels.empty() && !m_kernels.contains(c.kernel) && !m_kernels.contains(variant_label(c)))
      return false;
    for (const auto& [axis, values] : m_where)
      if (!values.contains(where_text(*axis, c))) return false;
    return true;
  }

 private:
  static long long parse_number(const std::string& where, const std::string& value) {
    std::size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size())
      throw PlotSpecError("--where " + where + ": '" + value + "' is not a whole number");
    return n;
  }

  std::set<std::string> m_kernels;
  std::vector<std::pair<const AxisDef*, std::set<std::string>>> m_where;  // axis, accepted values
};

double max_abs_y(const Plot& plot) {
  double m = 0;
  for (const Series& s : plot.series)
    for (double y : s.y)
      if (std::isfinite(y)) m = std::max(m, std::fabs(y));
  return m;
}

// Whether axis `a` must split the points of one series key (run, kernel, the axes split so
// far) that `key` gives: a series holds only cases that differ along x. `a` may stay unsplit only
// when it follows x one-to-one (Sk = Sq, B = tokens / S): then each x has one value of `a` and
// each value one x. One value per x but shared by several x (D=64 at S=128 and 256, D=128 at
// S=512 and 1k) would join two sweeps into one false trend, so it splits.
bool must_split(const std::vector<Point>& points, const AxisDef& xdef, const AxisDef& a,
                const std::function<std::vector<std::string>(const Point&)>& key) {
  std::map<std::vector<std::string>, std::map<std::string, std::string>> x_to_a;
  std::map<std::vector<std::string>, std::map<std::string, std::set<std::string>>> a_to_x;
  for (const Point& p : points) {
    const std::vector<std::string> k = key(p);
    const std::string x = xdef.text(*p.c), v = a.text(*p.c);
    const auto [xi, x_new] = x_to_a[k].emplace(x, v);
    if (!x_new && xi->second != v) return true;  // two values at one x
    a_to_x[k][v].insert(x);
  }
  // Several values, one of them at two x: not one-to-one (a constant axis never splits).
  for (const auto& [k, values] : a_to_x)
    if (values.size() > 1)
      for (const auto& [v, xs] : values)
        if (xs.size() > 1) return true;
  return false;
}

std::vector<const AxisDef*> split_axes(const std::vector<Point>& points, const AxisDef* xdef,
                                       const PlotSpec& spec) {
  std::vector<const AxisDef*> split;
  if (!spec.group_by.empty()) {
    for (const std::string& g : spec.group_by) split.push_back(find_axis(g));
    return split;
  }
  for (const std::string& name : kDefaultSplitAxes) {
    const AxisDef* a = find_axis(name);
    if (a == xdef) continue;
    // Keyed by the axes already split on too, so head_dim_v, tied to head_dim, adds no split.
    auto key = [&](const Point& p) {
      std::vector<std::string> k{std::to_string(p.run), variant_label(*p.c)};
      for (const AxisDef* done : split) k.push_back(done->text(*p.c));
      return k;
    };
    if (must_split(points, *xdef, *a, key)) split.push_back(a);
  }
  return split;
}

}  // namespace

std::vector<std::string> plot_metrics(const std::vector<LoadedRun>& runs) {
  std::set<std::string> more;
  for (const LoadedRun& r : runs)
    for (const CaseResult& c : r.cases)
      if (c.status == Status::ok)
        for (const auto& [name, value] : case_values(c)) more.insert(name);
  std::vector<std::string> out{"tflops", "speedup", "latency", "gbps"};
  for (const std::string& m : more)
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  return out;
}

Plot build_plot(const std::vector<LoadedRun>& runs, const PlotSpec& spec) {
  const AxisDef* xdef = find_axis(spec.x);
  if (!xdef) throw PlotSpecError("--x " + spec.x + ": unknown axis; allowed: " + joined(plot_axes()));
  for (const std::string& g : spec.group_by) {
    if (!find_axis(g))
      throw PlotSpecError("--group-by " + g + ": unknown axis; allowed: " + joined(plot_axes()));
    if (g == spec.x) throw PlotSpecError("--group-by " + g + ": that is the x axis; group by the other axes");
  }
  if (!xdef->number && spec.kind == PlotKind::line)
    throw PlotSpecError("--x " + spec.x +
                        ": a categorical axis needs --kind bars (numeric axes: batch, tokens, "
                        "heads, heads_kv, hidden, seq, seq_q, seq_kv, head_dim, head_dim_v)");
  if (spec.log_x && (!xdef->number || spec.kind == PlotKind::bars))
    throw PlotSpecError("--log-x: the x axis of " + spec.x + (spec.kind == PlotKind::bars ? " bars" : "") +
                        " is categorical; drop --log-x");
  if (runs.empty()) throw PlotSpecError("RESULTS: no results file given");

  const bool speedup = spec.y == "speedup", latency = spec.y == "latency";
  const std::vector<std::string> allowed = plot_metrics(runs);
  if (!speedup && !latency && std::find(allowed.begin(), allowed.end(), spec.y) == allowed.end())
    throw PlotSpecError("--y " + spec.y +
                        ": not a measurement in these results; allowed: " + joined(allowed));

  Plot plot;
  std::string baseline = spec.baseline;
  if (speedup) {
    if (baseline.empty()) baseline = runs.front().run.baseline;
    std::set<std::string> kernels;
    bool found = false;
    for (const LoadedRun& r : runs)
      for (const CaseResult& c : r.cases)
        if (is_measured(c)) {
          kernels.insert(variant_label(c));
          found = found || variant_label(c) == baseline;
        }
    const std::string have = kernels.empty() ? "none" : joined({kernels.begin(), kernels.end()});
    if (baseline.empty())
      throw PlotSpecError(
          "--y speedup needs --baseline KERNEL (the results name none); kernels with ok cases: " + have);
    if (!found)
      throw PlotSpecError("--baseline " + baseline +
                          ": no ok case of that kernel in the results; kernels with ok "
                          "cases: " +
                          have);
  }

  // The points: ok cases that pass the filters, with a y value.
  const CaseFilter filter(runs, spec);
  std::vector<Point> points;
  std::map<std::string, int> not_ok;
  std::size_t no_value = 0, no_baseline = 0;
  for (std::size_t ri = 0; ri < runs.size(); ++ri) {
    const auto& cases = runs[ri].cases;
    // The baseline's ok cases bucketed by shape, so a speedup finds its reference without a
    // scan of the whole run per case (4000 cases made that 16M comparisons per GUI refresh).
    using ShapeKey =
        std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
    const auto shape = [](const Problem& pr) {
      return ShapeKey{pr.batch, pr.heads_q, pr.seq_q, pr.seq_kv, pr.head_dim, pr.head_dim_v};
    };
    std::map<ShapeKey, std::vector<const CaseResult*>> base_cases;
    if (speedup)
      for (const CaseResult& b : cases)
        if (variant_label(b) == baseline && b.status == Status::ok)
          base_cases[shape(b.problem)].push_back(&b);
    for (const CaseResult& c : cases) {
      if (!filter.keeps(c)) continue;
      if (c.status != Status::ok) {
        ++not_ok[std::string(to_string(c.status))];
        continue;
      }
      std::optional<double> y;
      if (speedup) {
        if (variant_label(c) == baseline) continue;
        std::optional<double> base;
        if (const auto it = base_cases.find(shape(c.problem)); it != base_cases.end())
          for (const CaseResult* b : it->second)
            if (b->problem == c.problem)
              if (const auto m = measured_median_ms(*b); m && (!base || *m < *base)) base = m;
        const auto m = timed_median_ms(c);
        if (!base) ++no_baseline;
        if (base && m) y = *base / *m;
      } else if (latency) {
        y = timed_median_ms(c);
      } else {
        const auto values = case_values(c);
        if (const auto it = values.find(spec.y); it != values.end()) y = it->second;
      }
      if (!y) {
        if (!speedup) ++no_value;
        continue;
      }
      if (spec.log_y && !(*y > 0)) {
        ++no_value;
        continue;
      }
      points.push_back({ri, &c, *y});
    }
  }
  if (!not_ok.empty()) {
    std::vector<std::string> parts;
    int total = 0;
    for (const auto& [status, n] : not_ok) parts.push_back(fmt::format("{} {}", n, status)), total += n;
    plot.notes.push_back(fmt::format("{} cases not ok are not plotted ({})", total, joined(parts)));
  }
  if (no_baseline)
    plot.notes.push_back(
        fmt::format("{} cases have no ok {} case on the same problem", no_baseline, baseline));
  if (no_value)
    plot.notes.push_back(
        fmt::format("{} ok cases have no {} value{}", no_value, spec.y, spec.log_y ? " > 0" : ""));
  if (points.empty())
    throw PlotSpecError(
        "--y " + spec.y + ": no ok case to plot" +
        (speedup ? " (no kernel besides the baseline " + baseline + " shares a problem with it)" : "") +
        (spec.kernels.empty() && spec.where.empty() ? "" : " among the cases --kernels/--where select"));

  const std::vector<const AxisDef*> split = split_axes(points, xdef, spec);

  // Series keys in first-appearance order of (run, kernel variant), then by group text. Variants
  // of one kernel (variant_label: "fa2.mma@br=64") are separate series whatever the split axes.
  struct Group {
    std::size_t run;
    std::string kernel;
    std::vector<std::string> values;
    std::map<std::string, std::vector<Point>> by_x;  // keyed by the x text for exact matching
  };
  // A version of a watched kernel file (the GUI's hot reload) is its own series: "my.kernel@v3".
  auto series_kernel = [&](const Point& p) {
    std::string label = variant_label(*p.c);
    for (const PluginRecord& lib : runs[p.run].run.plugins)
      if (lib.version > 0 &&
          std::find(lib.kernels.begin(), lib.kernels.end(), p.c->kernel) != lib.kernels.end())
        label += "@v" + std::to_string(lib.version);
    return label;
  };
  std::vector<std::string> kernel_order;
  for (const Point& p : points)
    if (std::find(kernel_order.begin(), kernel_order.end(), series_kernel(p)) == kernel_order.end())
      kernel_order.push_back(series_kernel(p));
  // Numeric split values sort by number (D=64 before D=128), the others by text.
  using SortValues = std::vector<std::pair<double, std::string>>;
  std::map<std::tuple<std::size_t, std::size_t, SortValues>, Group> groups;
  for (const Point& p : points) {
    std::vector<std::string> values;
    SortValues order;
    for (const AxisDef* a : split) {
      values.push_back(a->text(*p.c));
      order.emplace_back(a->number ? a->number(*p.c) : 0.0, values.back());
    }
    const std::size_t kidx = static_cast<std::size_t>(
        std::find(kernel_order.begin(), kernel_order.end(), series_kernel(p)) - kernel_order.begin());
    Group& g = groups[{p.run, kidx, order}];
    g.run = p.run;
    g.kernel = series_kernel(p);
    g.values = values;
    g.by_x[xdef->text(*p.c)].push_back(p);
  }

  // Categories for bars: the distinct x values, numerically sorted where the axis is numeric.
  std::vector<std::pair<double, std::string>> cats;
  for (const Point& p : points) {
    const std::pair<double, std::string> k{xdef->number ? xdef->number(*p.c) : 0.0, xdef->text(*p.c)};
    if (std::find(cats.begin(), cats.end(), k) == cats.end()) cats.push_back(k);
  }
  if (xdef->number) std::sort(cats.begin(), cats.end());
  const bool bars = spec.kind == PlotKind::bars;

  const FieldDesc* mdef = find_field(spec.y);
  if (mdef && !mdef->plot) mdef = nullptr;
  const bool higher_better = speedup || (!latency && (!mdef || mdef->higher_is_better));
  // Run ids only where a kernel name alone would be ambiguous (an attnscope run beside an external
  // baseline's run needs none).
  std::map<std::string, std::set<std::size_t>> runs_of_kernel;
  for (const Point& p : points) runs_of_kernel[series_kernel(p)].insert(p.run);
  const bool prefix_run = std::any_of(runs_of_kernel.begin(), runs_of_kernel.end(),
                                      [](const auto& k) { return k.second.size() > 1; });
  // A label names the kernel and only the split values that differ between series; a split axis
  // with one value across the plot goes to the subtitle instead.
  std::vector<bool> label_axis(split.size(), false);
  for (std::size_t i = 0; i < split.size(); ++i)
    for (const auto& [key, g] : groups)
      label_axis[i] = label_axis[i] || g.values[i] != groups.begin()->second.values[i];
  for (std::size_t i = 0; i < split.size(); ++i)
    if (label_axis[i]) plot.series_axes.push_back(split[i]->name);
  std::size_t combined = 0;
  for (auto& [key, g] : groups) {
    Series s;
    std::string label = prefix_run ? runs[g.run].run.run_id + ": " + g.kernel : g.kernel;
    for (std::size_t i = 0; i < g.values.size(); ++i)
      if (label_axis[i]) label += " " + g.values[i];
    s.label = label;
    s.kernel = g.kernel;
    s.run = g.run;
    std::vector<std::tuple<double, double, std::string>> xy;
    for (auto& [xtext, pts] : g.by_x) {
      if (pts.size() > 1) ++combined;
      double best = pts.front().y;
      std::string best_id = pts.front().c->case_id;
      for (const Point& p : pts)
        if (higher_better ? p.y > best : p.y < best) best = p.y, best_id = p.c->case_id;
      double x = 0;
      if (bars) {
        const std::pair<double, std::string> k{xdef->number ? xdef->number(*pts.front().c) : 0.0, xtext};
        x = static_cast<double>(std::find(cats.begin(), cats.end(), k) - cats.begin());
      } else {
        x = xdef->number(*pts.front().c);
      }
      xy.emplace_back(x, best, std::move(best_id));
    }
    std::sort(xy.begin(), xy.end());
    for (const auto& [x, y, id] : xy) s.x.push_back(x), s.y.push_back(y), s.case_ids.push_back(id);
    plot.series.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < plot.series.size(); ++i) plot.series[i].set_style(series_style(i));
  if (combined) {
    std::vector<std::string> free_axes;
    for (const std::string& name : kDefaultSplitAxes)
      if (name != spec.x &&
          std::find(spec.group_by.begin(), spec.group_by.end(), name) == spec.group_by.end())
        free_axes.push_back(name);
    plot.notes.push_back(
        fmt::format("{} points stand for several cases at one x (axes not in --group-by vary); each "
                    "shows the best value (group by one of: {})",
                    combined, joined(free_axes)));
  }

  // Latency in µs when every value is below 1 ms, like the summary table.
  std::string yunit = mdef ? std::string(display_unit(*mdef)) : "";
  std::string ylabel = mdef ? std::string(mdef->label) : spec.y;
  if (latency) {
    ylabel = "Latency (median)";
    yunit = "ms";
  }
  if (const UnitScale u = scaled_unit(yunit, max_abs_y(plot)); u.factor != 1) {
    yunit = u.unit;
    for (Series& s : plot.series)
      for (double& y : s.y) y *= u.factor;
  }
  if (speedup) {
    ylabel = "Speedup over " + baseline;
    yunit = "×";
    plot.hlines.push_back({1.0, baseline + " = 1", Color{80, 80, 80, 255}});
  }

  plot.kind = spec.kind;
  plot.x.label = xdef->label;
  plot.x.unit = xdef->unit;
  plot.x.scale = spec.log_x ? Scale::log10 : Scale::linear;
  plot.y.label = ylabel;
  plot.y.unit = yunit;
  plot.y.scale = spec.log_y ? Scale::log10 : Scale::linear;
  if (bars) {
    for (const auto& [v, text] : cats) plot.x.categories.push_back(xdef->number ? format_tick(v, 0) : text);
  } else {
    // Ticks at the swept sizes when they are few: powers of two on a log axis, or evenly spaced.
    std::vector<double> xs;
    for (const auto& [v, text] : cats) xs.push_back(v);
    bool even = xs.size() >= 2, pow2 = true;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (i >= 2) even = even && std::fabs((xs[i] - xs[i - 1]) - (xs[1] - xs[0])) < 1e-9 * std::fabs(xs[1]);
      const double l = std::log2(xs[i]);
      pow2 = pow2 && xs[i] > 0 && std::fabs(l - std::round(l)) < 1e-9;
    }
    // On a log axis the swept sizes are the ticks (64, 128, 256 rather than 100 and 200);
    // layout thins them when they crowd.
    if (xs.size() >= 2 &&
        (spec.log_x ? (pow2 && xs.size() <= 32) || xs.size() <= 12 : even && xs.size() <= 16))
      plot.x.data_ticks = xs;
  }

  // Title and the fixed axes as a subtitle.
  std::set<std::string> gpus;
  for (const LoadedRun& r : runs)
    gpus.insert(gpu_name(r.run) == "CPU" && !r.run.cpu_model.empty() ? r.run.cpu_model : gpu_name(r.run));
  const std::string where = gpus.size() == 1 ? *gpus.begin() + ": " : "";
  std::string what = lower_first(ylabel);
  if (spec.y == "tflops" || spec.y == "gbps") what = yunit;
  if (latency) what = "latency";
  if (speedup) what = "speedup over " + baseline;
  plot.title = !spec.title.empty() ? spec.title : where + what + " vs " + lower_first(xdef->label);
  std::vector<std::string> fixed;
  for (const std::string& name : kDefaultSplitAxes) {
    const AxisDef* a = find_axis(name);
    if (a == xdef) continue;
    const auto in_split = std::find(split.begin(), split.end(), a);
    if (in_split != split.end() && label_axis[static_cast<std::size_t>(in_split - split.begin())]) continue;
    if ((name == "seq_q" || name == "seq_kv") && spec.x == "seq") continue;
    std::set<std::string> values;
    for (const Point& p : points) values.insert(a->text(*p.c));
    if (values.size() != 1) continue;
    const std::string v = *values.begin();
    const CaseResult& c = *points.front().c;
    // Leave out what equals its default: Hkv = H, Sk = Sq, Dv = D, default knobs.
    if (name == "heads_kv" && c.problem.heads_kv == c.problem.heads_q) continue;
    if (name == "seq_kv" && c.problem.seq_kv == c.problem.seq_q) continue;
    if (name == "head_dim_v" && c.problem.head_dim_v == c.problem.head_dim) continue;
    if (name == "knobs" && c.knobs.empty()) continue;
    if (name == "pass" && c.problem.pass == Pass::fwd) continue;
    if (name == "device") continue;  // the title names the one device
    fixed.push_back(name == "seq_q" && c.problem.seq_kv == c.problem.seq_q ? "S=" + v.substr(3) : v);
  }
  plot.subtitle = joined(fixed);
  return plot;
}

std::string default_plot_filename(const std::vector<LoadedRun>& runs, const PlotSpec& spec,
                                  const Plot& plot) {
  std::string gpu = runs.empty() ? "CPU" : gpu_name(runs.front().run);
  std::replace(gpu.begin(), gpu.end(), ' ', '_');
  std::replace(gpu.begin(), gpu.end(), '/', '_');
  if (spec.y == "speedup") {
    std::set<std::string> kernels;
    for (const Series& s : plot.series) kernels.insert(s.kernel);
    if (kernels.size() == 1) return gpu + "_" + *kernels.begin() + "_Speedup.png";
  }
  return gpu + ".png";
}

}  // namespace attn::plot
