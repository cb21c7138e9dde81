// render_report_figures(): the choice of x axis and panels, and the roofline plot.
#include "reports/report_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "reports/case_query.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plot/plot_build.hpp"
#include "reports/plot/raster.hpp"
#include "reports/plot/svg.hpp"

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

// The PNG, and the SVG beside it when asked; `file` names the PNG.
void write_figure(const plot::Plot& p, const FigureOptions& o, const std::string& file) {
  plot::write_png(plot::render_plot(p, o.width, o.height), o.out_dir / file);
  if (o.svg)
    plot::write_svg(plot::render_plot_svg(p, o.width, o.height),
                    o.out_dir / std::filesystem::path(file).replace_extension(".svg"));
}

// "sequence length" for seq: titles and captions name axes as a reader would.
std::string human(const std::string& axis) {
  std::string s = plot::axis_label(axis);
  if (s.size() > 1 && std::isupper(static_cast<unsigned char>(s[0])) &&
      !std::isupper(static_cast<unsigned char>(s[1])))
    s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

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
    // A length equal to the x length follows x ("Sk=Sq"): a square sweep on a seq_q axis is one
    // panel, not one single-point panel per size. So does a compressed branch's Sk, its block count.
    const bool follows =
        p.seq_q == p.seq_kv || (p.compress.active() && p.seq_kv == p.compress.blocks_at(p.seq_q - 1));
    if (!seq_x) f.emplace_back("S", x == "seq_kv" && follows ? "Sk" : std::to_string(p.seq_q));
    if (x != "seq_kv" && x != "seq")
      f.emplace_back("Sk", x == "seq_q" && follows ? "Sq" : std::to_string(p.seq_kv));
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
      // The panel fixes the rest; kernels always split series, and so do passes (never the best of both).
      spec.group_by = {"dtype", "pass"};
      spec.title =
          fmt::format("{}: {} vs {}, {}", gpu_name(run),
                      std::string(w.y) == "speedup" ? "speedup over " + o.baseline : std::string(w.what),
                      human(x), label);
      plot::Plot p;
      try {
        p = plot::build_plot({merged}, spec);
        // The unit may have scaled (GFLOPS on a CPU): the title says what the axis shows.
        if (std::string(w.y) == "tflops" && p.y.unit != "TFLOPS")
          p.title = fmt::format("{}: {} vs {}, {}", gpu_name(run), p.y.unit, human(x), label);
      } catch (const plot::PlotSpecError& e) {
        notes.push_back(fmt::format("figure {} vs {} ({}) not drawn: {}", w.what, x, label, e.what()));
        continue;
      }
      const std::string file = fmt::format("{}_vs_{}_{}.png", w.y, x, slug(label));
      write_figure(p, o, file);
      figures.push_back(
          {fmt::format("{} vs {}: {}", std::string(w.y) == "tflops" ? p.y.unit : std::string(w.what),
                       human(x), label),
           o.link_prefix + file,
           fmt::format("{}. Fixed: {}.",
                       std::string(w.y) == "speedup" ? "Speedup = the " + o.baseline +
                                                           " median on the same problem / the kernel's median"
                                                     : std::string("TFLOPS = flops / median"),
                       fixed)});
    }
  }
  try {
    const plot::Plot p = roofline_plot(set.cases, run, o.roofline);
    write_figure(p, o, "roofline.png");
    // The intensity fallback is in the caption; what was left out is a note.
    for (const std::string& n : p.notes)
      if (n.rfind("no case holds CUPTI DRAM bytes", 0) != 0) notes.push_back("roofline: " + n);
    const bool algorithmic = p.x.label == "Arithmetic intensity";
    figures.push_back(
        {"Roofline", o.link_prefix + "roofline.png",
         std::string(algorithmic ? "Every measured case at its algorithmic intensity (flops / minimum bytes)"
                                 : "Every measured case at its measured intensity (flops / DRAM bytes CUPTI "
                                   "counted)") +
             "; the ceilings are min(tensor peak, intensity x bandwidth), each ridge point labelled."});
  } catch (const std::invalid_argument& e) {
    notes.push_back(std::string("roofline not drawn: ") + e.what());
  }
  return figures;
}

}  // namespace attn
