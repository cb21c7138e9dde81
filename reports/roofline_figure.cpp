// roofline_plot(): ceilings as polylines, cases as points per kernel, ridge annotations.
#include "reports/roofline_figure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "reports/plot/units.hpp"

namespace attn {

namespace {

bool measured(const CaseResult& c) {
  return c.status == Status::ok && c.timing && c.timing->median_ms > 0 && c.tflops && c.flops > 0;
}

std::optional<double> l2_bytes(const CaseResult& c) {
  if (!c.metrics) return std::nullopt;
  if (const auto& b = c.metrics->aggregate.l2_bytes; b && *b > 0) return *b;
  const auto& extra = c.metrics->aggregate.extra;
  const auto it = extra.find("lts__t_bytes.sum");
  if (it == extra.end() || !(it->second > 0)) return std::nullopt;
  return it->second;
}

std::string gpu_name(const RunInfo& run) { return run.gpu ? run.gpu->name : std::string("CPU"); }

}  // namespace

std::optional<double> measured_dram_bytes(const CaseResult& c) {
  if (c.metrics && c.metrics->aggregate.dram_bytes && *c.metrics->aggregate.dram_bytes > 0)
    return *c.metrics->aggregate.dram_bytes;
  return std::nullopt;
}

plot::Plot roofline_plot(const std::vector<CaseResult>& cases, const RunInfo& run,
                         const RooflineOptions& options) {
  const Peaks& pk = run.peaks;
  struct Ceiling {
    std::string label;
    double tflops, gbps;
    plot::Color color;
    plot::Dash dash;
  };
  std::vector<Ceiling> ceilings;
  if (pk.tensor_tflops_measured && pk.dram_gbps_measured)
    ceilings.push_back({"measured DRAM",
                        *pk.tensor_tflops_measured,
                        *pk.dram_gbps_measured,
                        {60, 60, 60, 255},
                        plot::Dash::solid});
  if (pk.tensor_tflops_datasheet && pk.dram_gbps_datasheet)
    ceilings.push_back({"datasheet DRAM",
                        *pk.tensor_tflops_datasheet,
                        *pk.dram_gbps_datasheet,
                        {150, 150, 150, 255},
                        plot::Dash::dashed});
  if (ceilings.empty())
    throw std::invalid_argument("the run records no tensor and DRAM peak pair (measured or datasheet)");
  // The L2 ceiling: as asked, else the run's measured L2 bandwidth.
  const std::optional<double> l2_gbps = options.l2_gbps ? options.l2_gbps : pk.l2_gbps_measured;
  if (l2_gbps && *l2_gbps > 0)
    ceilings.push_back({options.l2_gbps ? "L2" : "measured L2",
                        ceilings.front().tflops,
                        *l2_gbps,
                        {120, 60, 20, 255},
                        plot::Dash::dash_dot});

  plot::Plot p;
  bool use_measured = options.intensity == RooflineIntensity::measured;
  if (use_measured && std::none_of(cases.begin(), cases.end(), [](const CaseResult& c) {
        return measured(c) && measured_dram_bytes(c);
      })) {
    use_measured = false;
    p.notes.push_back(
        "no case holds CUPTI DRAM bytes (a CPU run or --metrics none): intensity is algorithmic");
  }
  // Placement per kernel: DRAM (or algorithmic) intensity, and L2 intensity where known.
  std::map<std::string, std::vector<std::tuple<double, double, std::string>>> at_dram, at_l2;
  std::vector<std::string> order;
  double ai_min = 1e300, ai_max = 0;
  std::size_t without_bytes = 0;
  for (const CaseResult& c : cases) {
    if (!measured(c)) continue;
    double ai = 0;
    if (use_measured) {
      const auto bytes = measured_dram_bytes(c);
      if (!bytes) {
        ++without_bytes;
        continue;
      }
      ai = c.flops / *bytes;
    } else {
      if (c.min_bytes <= 0) continue;
      ai = c.flops / static_cast<double>(c.min_bytes);
    }
    const std::string& k = variant_label(c);
    if (!at_dram.contains(k)) order.push_back(k);
    at_dram[k].emplace_back(ai, *c.tflops, c.case_id);
    ai_min = std::min(ai_min, ai), ai_max = std::max(ai_max, ai);
    if (const auto l2 = l2_bytes(c); l2 && l2_gbps) {
      const double l2_ai = c.flops / *l2;
      at_l2[k].emplace_back(l2_ai, *c.tflops, c.case_id);
      ai_min = std::min(ai_min, l2_ai), ai_max = std::max(ai_max, l2_ai);
    }
  }
  if (order.empty()) throw std::invalid_argument("no measured case to place on the roofline");
  if (without_bytes)
    p.notes.push_back(fmt::format("{} measured cases hold no DRAM bytes and are not placed", without_bytes));
  if (l2_gbps && at_l2.empty())
    p.notes.push_back(
        "L2 ceiling drawn, but no case holds its L2 traffic (metrics.l2_bytes, lts__t_bytes.sum)");

  // Units scale with the data: a CPU run's points read in GFLOPS. Ceilings share the axis.
  const plot::UnitScale unit = plot::scaled_unit("TFLOPS", ceilings.front().tflops);
  p.title = gpu_name(run) + ": roofline";
  p.subtitle = use_measured ? "measured intensity = flops / DRAM bytes counted by CUPTI"
                            : "algorithmic intensity = flops / (Q, K, V read once + O written once)";
  if (!at_l2.empty()) p.subtitle += "; hollow = the same case at its L2 intensity";
  p.x = {use_measured ? "Measured intensity" : "Arithmetic intensity", "FLOP/byte", plot::Scale::log10};
  p.y = {"Throughput", unit.unit, plot::Scale::log10};
  for (const Ceiling& ce : ceilings) {
    // The ridge: where intensity x bandwidth meets the tensor peak [FLOP/B = TFLOPS / (GB/s) x 1e3].
    const double ridge = ce.tflops * 1e3 / ce.gbps;
    const double lo = std::min(ai_min, ridge) / 2, hi = std::max(ai_max, ridge) * 2;
    plot::Series s;
    s.label = fmt::format("{} ceiling ({:.0f} {}, {:.0f} GB/s)", ce.label, ce.tflops * unit.factor, unit.unit,
                          ce.gbps);
    s.color = ce.color;
    s.dash = ce.dash;
    s.markers = false;  // the ridge annotation marks the one point that matters
    for (const double x : {lo, ridge, hi}) {
      s.x.push_back(x);
      s.y.push_back(std::min(ce.tflops, x * ce.gbps * 1e-3) * unit.factor);
    }
    p.series.push_back(std::move(s));
    p.annotations.push_back(
        {ridge, ce.tflops * unit.factor,
         fmt::format("{} ridge {:.0f} FLOP/B", ce.label.substr(0, ce.label.find(' ')), ridge), ce.color});
  }
  std::size_t style = 0;
  for (const std::string& k : order) {
    const plot::SeriesStyle st = plot::series_style(style++);
    for (const bool l2 : {false, true}) {
      auto& src = l2 ? at_l2 : at_dram;
      if (!src.contains(k)) continue;
      auto pts = src[k];
      std::sort(pts.begin(), pts.end());
      plot::Series s;
      s.label = l2 ? k + " (L2)" : k;
      s.kernel = k;
      s.set_style(st);
      s.line = false;
      s.hollow = l2;
      for (const auto& [x, y, id] : pts)
        s.x.push_back(x), s.y.push_back(y * unit.factor), s.case_ids.push_back(id);
      p.series.push_back(std::move(s));
    }
  }
  return p;
}

}  // namespace attn
