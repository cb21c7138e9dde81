// Report section: findings computed from the data (compute_observations, as data) and rendered
// apart (render_observation): the fastest kernel per regime, each kernel's speedup range over the
// baseline, and cases near a roofline ceiling. Rules in docs/reports.md.
#include <fmt/format.h>

#include <map>
#include <set>

#include "reports/case_query.hpp"
#include "reports/sections/section.hpp"
#include "reports/sections/section_util.hpp"
#include "reports/text_format.hpp"

namespace attn {

namespace {

ObservedCase observed(const CaseResult& c) { return {variant_label(c), config_label(c.problem, c.knobs)}; }

}  // namespace

std::vector<Observation> compute_observations(const std::vector<CaseResult>& cases, const RunInfo& run,
                                              const std::string& baseline, double near_ceiling) {
  std::vector<Observation> out;
  // 1. The fastest kernel per regime, counted over problems where at least two kernels were measured.
  std::vector<std::string> regimes;
  for (const CaseResult& c : cases)
    if (is_measured(c)) add_unique(regimes, regime_of(c.problem));
  for (const std::string& regime : regimes) {
    std::vector<Problem> problems;
    for (const CaseResult& c : cases)
      if (is_measured(c) && regime_of(c.problem) == regime) add_unique(problems, c.problem);
    std::map<std::string, int> wins;
    std::vector<std::string> order;
    int contested = 0;
    const CaseResult* top = nullptr;  // the highest TFLOPS of the regime
    for (const Problem& p : problems) {
      const CaseResult* best = nullptr;
      std::set<std::string> kernels;
      for (const CaseResult& c : cases) {
        if (!is_measured(c) || !(c.problem == p)) continue;
        kernels.insert(variant_label(c));
        if (!best || *measured_median_ms(c) < *measured_median_ms(*best)) best = &c;
        if (c.tflops && (!top || *c.tflops > *top->tflops)) top = &c;
      }
      if (kernels.size() < 2) continue;
      ++contested;
      add_unique(order, variant_label(*best));
      ++wins[variant_label(*best)];
    }
    if (contested == 0) continue;
    std::stable_sort(order.begin(), order.end(),
                     [&](const auto& a, const auto& b) { return wins[a] > wins[b]; });
    FastestInRegime f{regime, contested, {}, std::nullopt};
    for (const auto& k : order) f.wins.emplace_back(k, wins[k]);
    if (top) f.top = std::make_pair(observed(*top), *top->tflops);
    out.emplace_back(std::move(f));
  }
  // 2. Where each kernel's speedup over the baseline peaks (and where it is lowest).
  if (!baseline.empty()) {
    std::vector<std::string> kernels;
    for (const CaseResult& c : cases)
      if (is_measured(c) && variant_label(c) != baseline) add_unique(kernels, variant_label(c));
    for (const std::string& k : kernels) {
      const CaseResult *hi = nullptr, *lo = nullptr;
      double s_hi = 0, s_lo = 0;
      int n = 0;
      for (const CaseResult& c : cases) {
        if (variant_label(c) != k || !is_measured(c)) continue;
        const auto s = speedup_over(cases, baseline, c);
        if (!s) continue;
        ++n;
        if (!hi || *s > s_hi) hi = &c, s_hi = *s;
        if (!lo || *s < s_lo) lo = &c, s_lo = *s;
      }
      if (n == 0) continue;
      out.emplace_back(SpeedupRange{k, baseline, observed(*hi), s_hi, observed(*lo), s_lo, n});
    }
  }
  // 3. Cases near a roofline ceiling (measured peaks first, else datasheet).
  RooflineNearness r;
  r.near_ceiling = near_ceiling;
  r.tensor_tflops =
      run.peaks.tensor_tflops_measured ? run.peaks.tensor_tflops_measured : run.peaks.tensor_tflops_datasheet;
  r.dram_gbps = run.peaks.dram_gbps_measured ? run.peaks.dram_gbps_measured : run.peaks.dram_gbps_datasheet;
  r.tensor_kind = run.peaks.tensor_tflops_measured ? "measured" : "datasheet";
  r.dram_kind = run.peaks.dram_gbps_measured ? "measured" : "datasheet";
  if (r.tensor_tflops || r.dram_gbps) {
    double best_frac = 0;
    for (const CaseResult& c : cases) {
      if (!is_measured(c)) continue;
      if (r.tensor_tflops && c.tflops) {
        const double f = *c.tflops / *r.tensor_tflops;
        if (f >= near_ceiling) r.near.push_back({observed(c), f, "tensor"});
        if (f > best_frac) best_frac = f, r.closest = RooflineNearness::Near{observed(c), f, "tensor"};
      }
      if (r.dram_gbps && c.gbps) {
        const double f = *c.gbps / *r.dram_gbps;
        if (f >= near_ceiling) r.near.push_back({observed(c), f, "memory"});
      }
    }
    std::stable_sort(r.near.begin(), r.near.end(),
                     [](const auto& a, const auto& b) { return a.frac > b.frac; });
  }
  out.emplace_back(std::move(r));
  return out;
}

std::string render_observation(const Observation& o) {
  if (const auto* f = std::get_if<FastestInRegime>(&o)) {
    std::string tally;
    for (const auto& [k, n] : f->wins) tally += fmt::format("{}`{}` {}", tally.empty() ? "" : ", ", k, n);
    std::string line =
        fmt::format("{}: fastest on {} of {} problems with two or more measured kernels: `{}` ({}).",
                    f->regime, f->wins.front().second, f->contested, f->wins.front().first, tally);
    if (f->top)
      line += fmt::format(" Highest throughput: `{}` {} TFLOPS at {}.", f->top->first.kernel,
                          format_fixed4(f->top->second), f->top->first.config);
    return line;
  }
  if (const auto* s = std::get_if<SpeedupRange>(&o))
    return fmt::format("`{}` vs `{}`: speedup peaks at {:.2f}x on {}; lowest {:.2f}x on {} ({} problem{}).",
                       s->kernel, s->baseline, s->highest, s->at_highest.config, s->lowest,
                       s->at_lowest.config, s->problems, s->problems == 1 ? "" : "s");
  const auto& r = std::get<RooflineNearness>(o);
  if (!r.tensor_tflops && !r.dram_gbps)
    return "Roofline: no ceilings were recorded for this run (no measured or datasheet peaks), so nearness "
           "to a "
           "ceiling is not judged.";
  const std::string tensor = r.tensor_tflops ? format_fixed4(*r.tensor_tflops) : std::string("-");
  const std::string dram = r.dram_gbps ? format_fixed4(*r.dram_gbps) : std::string("-");
  if (r.near.empty()) {
    std::string line =
        fmt::format("Roofline: no case reaches {:.0f}% of a ceiling (tensor {} TFLOPS {}, memory {} GB/s {})",
                    r.near_ceiling * 100, tensor, r.tensor_kind, dram, r.dram_kind);
    if (r.closest)
      line += fmt::format("; the closest is `{}` at {:.0f}% of the tensor ceiling on {}.",
                          r.closest->c.kernel, r.closest->frac * 100, r.closest->c.config);
    else
      line += ".";
    return line;
  }
  std::string list;
  for (std::size_t i = 0; i < r.near.size() && i < 3; ++i)
    list += fmt::format("{}`{}` {} at {:.0f}% of the {} ceiling", i ? "; " : "", r.near[i].c.kernel,
                        r.near[i].c.config, r.near[i].frac * 100, r.near[i].what);
  return fmt::format(
      "Roofline: {} case{} at >= {:.0f}% of a ceiling (tensor {} TFLOPS {}, memory {} GB/s {}): {}.",
      r.near.size(), r.near.size() == 1 ? "" : "s", r.near_ceiling * 100, tensor, r.tensor_kind, dram,
      r.dram_kind, list);
}

std::vector<std::string> report_observations(const std::vector<CaseResult>& cases, const RunInfo& run,
                                             const std::string& baseline, double near_ceiling) {
  std::vector<std::string> lines;
  for (const Observation& o : compute_observations(cases, run, baseline, near_ceiling))
    lines.push_back(render_observation(o));
  return lines;
}

std::string observations_section(const ReportContext& ctx) {
  std::string out = "## Observations\n\nComputed from the data above (rules in docs/reports.md).\n\n";
  const auto obs =
      report_observations(ctx.set.cases, ctx.set.primary(), ctx.baseline, ctx.options.near_ceiling);
  if (obs.empty()) out += "- No kernel was measured, so there is nothing to observe.\n";
  for (const auto& line : obs) out += "- " + line + "\n";
  return out + "\n";
}

}  // namespace attn
