// render_report_figures(): the choice of x axis and panels, and the roofline plot.
#include "reports/report_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "reports/case_query.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plot/plot_build.hpp"
#include "reports/plot/raster.hpp"

namespace attn {

namespace {

bool measured(const CaseResult& c) { return is_measured(c) && c.tflops; }

using Getter = std::int64_t (*)(const Problem&);

struct AxisGet {
  const char* name;
  Getter get;
};

constexpr AxisGet kAxes[] = {
    {"seq", [](const Problem& p) { return p.seq_q; }},
    {"seq_kv", [](const Problem& p) { return p.seq_kv; }},
    {"head_dim", [](const Problem& p) { return p.head_dim; }},
    {"batch", [](const Problem& p) { return p.batch; }},
    {"heads", [](const Problem& p) { return p.heads_q; }},
};

template <class F>
std::size_t distinct(const std::vector<const CaseResult*>& cases, F&& f) {
  std::set<std::int64_t> s;
  for (const CaseResult* c : cases) s.insert(f(c->problem));
  return s.size();
}

std::string slug(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  return s;
}

std::string gpu_name(const RunInfo& run) { return run.gpu ? run.gpu->name : std::string("CPU"); }

}  // namespace

std::string most_swept_axis(const std::vector<CaseResult>& cases) {
  std::vector<const CaseResult*> ok;
  for (const CaseResult& c : cases)
    if (measured(c)) ok.push_back(&c);
  if (ok.empty()) return {};
  const bool square = std::all_of(ok.begin(), ok.end(),
                                  [](const CaseResult* c) { return c->problem.seq_q == c->problem.seq_kv; });
  std::string best;
  std::size_t best_n = 0;
  for (const AxisGet& a : kAxes) {
    const std::size_t n = distinct(ok, a.get);
    if (n > best_n) best_n = n, best = a.name;
  }
  if (best == "seq" && !square) best = "seq_q";
  return best;
}

plot::Plot roofline_plot(const std::vector<CaseResult>& cases, const RunInfo& run) {
  const Peaks& pk = run.peaks;
  struct Ceiling {
    const char* label;
    std::optional<double> tflops, gbps;
    plot::Color color;
  };
  std::vector<Ceiling> ceilings;
  if (pk.tensor_tflops_measured && pk.dram_gbps_measured)
    ceilings.push_back(
        {"measured ceiling", pk.tensor_tflops_measured, pk.dram_gbps_measured, {60, 60, 60, 255}});
  if (pk.tensor_tflops_datasheet && pk.dram_gbps_datasheet)
    ceilings.push_back(
        {"datasheet ceiling", pk.tensor_tflops_datasheet, pk.dram_gbps_datasheet, {150, 150, 150, 255}});
  if (ceilings.empty())
    throw std::invalid_argument("the run records no tensor and DRAM peak pair (measured or datasheet)");
  std::map<std::string, std::vector<std::pair<double, double>>> by_kernel;
  std::vector<std::string> order;
  double ai_min = 1e300, ai_max = 0;
  for (const CaseResult& c : cases) {
    if (!measured(c) || c.min_bytes <= 0) continue;
    const double ai = c.flops / static_cast<double>(c.min_bytes);
    const std::string& k = variant_label(c);
    if (!by_kernel.contains(k)) order.push_back(k);
    by_kernel[k].emplace_back(ai, *c.tflops);
    ai_min = std::min(ai_min, ai);
    ai_max = std::max(ai_max, ai);
  }
  if (order.empty()) throw std::invalid_argument("no measured case to place on the roofline");

  plot::Plot p;
  p.title = gpu_name(run) + ": roofline";
  p.subtitle = "algorithmic intensity = flops / (Q, K, V read once + O written once)";
  p.x = {"Arithmetic intensity", "FLOP/byte", plot::Scale::log10};
  p.y = {"Throughput", "TFLOPS", plot::Scale::log10};
  std::size_t colour = 0;
  for (const Ceiling& ce : ceilings) {
    // The knee: where AI x bandwidth meets the tensor peak [FLOP/byte = TFLOPS / (GB/s) x 1e3].
    const double knee = *ce.tflops * 1e3 / *ce.gbps;
    const double lo = std::min(ai_min, knee) / 2, hi = std::max(ai_max, knee) * 2;
    plot::Series s;
    s.label = fmt::format("{} ({:.0f} TFLOPS, {:.0f} GB/s)", ce.label, *ce.tflops, *ce.gbps);
    s.color = ce.color;
    for (const double x : {lo, knee, hi}) {
      s.x.push_back(x);
      s.y.push_back(std::min(*ce.tflops, x * *ce.gbps * 1e-3));
    }
    p.series.push_back(std::move(s));
  }
  for (const std::string& k : order) {
    auto pts = by_kernel[k];
    std::sort(pts.begin(), pts.end());
    plot::Series s;
    s.label = k;
    s.kernel = k;
    s.color = plot::palette_color(colour++);
    for (const auto& [x, y] : pts) s.x.push_back(x), s.y.push_back(y);
    p.series.push_back(std::move(s));
  }
  return p;
}

std::vector<ReportFigure> render_report_figures(const ResultSet& set, const FigureOptions& o,
                                                std::vector<std::string>& notes) {
  std::vector<ReportFigure> figures;
  const std::string x = most_swept_axis(set.cases);
  if (x.empty()) {
    notes.push_back("no figures: no case was measured");
    return figures;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw plot::PlotIoError(o.out_dir.string() + ": cannot create directory: " + ec.message());

  std::vector<const CaseResult*> ok;
  for (const CaseResult& c : set.cases)
    if (measured(c)) ok.push_back(&c);
  // Axes that follow x in FA2-style sweeps (B = tokens / S, H = hidden / D) do not split panels.
  const bool seq_x = x == "seq" || x == "seq_q";
  const bool batch_follows = seq_x && distinct(ok, [](const Problem& p) { return p.batch * p.seq_q; }) <
                                          distinct(
                                              ok, [](const Problem& p) { return p.batch; });
  const bool heads_follow =
      x == "head_dim" && distinct(ok, [](const Problem& p) { return p.heads_q * p.head_dim; }) <
                             distinct(
                                 ok, [](const Problem& p) { return p.heads_q; });
  // Dv = D in every measured case: Dv moves with a head_dim x axis ("Dv=D"), not one panel per D.
  const bool dv_follows = x == "head_dim" && std::all_of(ok.begin(), ok.end(), [](const CaseResult* c) {
                            return c->problem.head_dim_v == c->problem.head_dim;
                          });
  auto panel_fields = [&](const Problem& p) {
    std::vector<std::pair<std::string, std::string>> f;
    f.emplace_back("dtype", std::string(to_string(p.dtype)));
    f.emplace_back("mask", p.mask_label());
    if (x != "batch")
      f.emplace_back(batch_follows ? "B*S" : "B",
                     std::to_string(batch_follows ? p.batch * p.seq_q : p.batch));
    if (x != "heads")
      f.emplace_back(heads_follow ? "H*D" : "H",
                     std::to_string(heads_follow ? p.heads_q * p.head_dim : p.heads_q));
    f.emplace_back("Hkv", std::to_string(p.heads_kv));
    if (!seq_x) f.emplace_back("S", std::to_string(p.seq_q));
    if (x != "seq_kv" && x != "seq") f.emplace_back("Sk", std::to_string(p.seq_kv));
    if (x != "head_dim") f.emplace_back("D", std::to_string(p.head_dim));
    f.emplace_back("Dv", dv_follows && p.head_dim_v == p.head_dim ? "D" : std::to_string(p.head_dim_v));
    return f;
  };
  std::vector<std::vector<std::pair<std::string, std::string>>> panels;
  std::map<std::size_t, std::vector<CaseResult>> panel_cases;
  for (const CaseResult& c : set.cases) {
    const auto f = panel_fields(c.problem);
    auto it = std::find(panels.begin(), panels.end(), f);
    if (it == panels.end()) it = panels.insert(panels.end(), f);
    panel_cases[static_cast<std::size_t>(it - panels.begin())].push_back(c);
  }
  // A panel is named by dtype, mask and the fields that differ between the drawn panels (those
  // with a measured case: a panel of refused cases alone must not lengthen every name).
  std::set<std::string> varying;
  const std::vector<std::pair<std::string, std::string>>* first = nullptr;
  for (std::size_t pi = 0; pi < panels.size(); ++pi) {
    const auto& cases = panel_cases[pi];
    if (std::none_of(cases.begin(), cases.end(), measured)) continue;
    if (!first) first = &panels[pi];
    for (std::size_t i = 0; i < panels[pi].size(); ++i)
      if (panels[pi][i] != (*first)[i]) varying.insert(panels[pi][i].first);
  }

  const RunInfo& run = set.primary();
  std::size_t used = 0;
  for (std::size_t pi = 0; pi < panels.size(); ++pi) {
    const auto& cases = panel_cases[pi];
    if (std::none_of(cases.begin(), cases.end(), measured)) continue;
    if (used == o.max_panels) {
      notes.push_back(fmt::format("figures: only the first {} panels are drawn", o.max_panels));
      break;
    }
    ++used;
    std::string label = panels[pi][0].second + " " + panels[pi][1].second;
    std::string fixed;
    for (std::size_t i = 2; i < panels[pi].size(); ++i) {
      if (varying.contains(panels[pi][i].first))
        label += " " + panels[pi][i].first + "=" + panels[pi][i].second;
      fixed += (fixed.empty() ? "" : ", ") + panels[pi][i].first + "=" + panels[pi][i].second;
    }
    LoadedRun merged;
    merged.run = run;
    merged.run.baseline = o.baseline;
    merged.cases = cases;
    std::set<std::int64_t> xs;
    for (const CaseResult& c : cases)
      if (measured(c))
        for (const AxisGet& a : kAxes)
          if (x.starts_with(a.name)) xs.insert(a.get(c.problem));
    const bool log_x = !xs.empty() && *xs.rbegin() >= 8 * *xs.begin();

    struct Want {
      const char* y;
      const char* what;
      plot::PlotKind kind;
    };
    std::vector<Want> wants{{"tflops", "TFLOPS", plot::PlotKind::line}};
    if (!o.baseline.empty())
      wants.push_back({"speedup", "speedup", xs.size() <= 12 ? plot::PlotKind::bars : plot::PlotKind::line});
    for (const Want& w : wants) {
      plot::PlotSpec spec;
      spec.x = x;
      spec.y = w.y;
      spec.baseline = o.baseline;
      spec.kind = w.kind;
      spec.log_x = log_x && w.kind == plot::PlotKind::line;
      spec.group_by = {"dtype"};  // the panel fixes the rest; kernels always split series
      spec.title = fmt::format(
          "{}: {} vs {}, {}", gpu_name(run),
          std::string(w.y) == "speedup" ? "speedup over " + o.baseline : std::string(w.what), x, label);
      plot::Plot p;
      try {
        p = plot::build_plot({merged}, spec);
      } catch (const plot::PlotSpecError& e) {
        notes.push_back(fmt::format("figure {} vs {} ({}) not drawn: {}", w.what, x, label, e.what()));
        continue;
      }
      const std::string file = fmt::format("{}_vs_{}_{}.png", w.y, x, slug(label));
      plot::write_png(plot::render_plot(p, o.width, o.height), o.out_dir / file);
      figures.push_back(
          {fmt::format("{} vs {}: {}", w.what, x, label), o.link_prefix + file,
           fmt::format("{}. Fixed: {}.",
                       std::string(w.y) == "speedup" ? "Speedup = the " + o.baseline +
                                                           " median on the same problem / the kernel's median"
                                                     : std::string("TFLOPS = flops / median"),
                       fixed)});
    }
  }
  try {
    const plot::Plot p = roofline_plot(set.cases, run);
    plot::write_png(plot::render_plot(p, o.width, o.height), o.out_dir / "roofline.png");
    figures.push_back(
        {"Roofline", o.link_prefix + "roofline.png",
         "Every measured case at its algorithmic intensity (flops / minimum bytes); the ceilings are "
         "min(tensor peak, intensity x DRAM bandwidth)."});
  } catch (const std::invalid_argument& e) {
    notes.push_back(std::string("roofline not drawn: ") + e.what());
  }
  return figures;
}

}  // namespace attn
