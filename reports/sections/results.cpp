// Report section: the measured cases per dtype, with speedups over the baseline and the check.
#include <fmt/format.h>

#include <algorithm>

#include "reports/case_query.hpp"
#include "reports/plot/units.hpp"
#include "reports/sections/section.hpp"
#include "reports/sections/section_util.hpp"
#include "reports/table.hpp"
#include "reports/text_format.hpp"

namespace attn {

std::string results_section(const ReportContext& ctx) {
  const ResultSet& set = ctx.set;
  const std::string& baseline = ctx.baseline;
  std::string out = "## Results\n\n";
  out +=
      "Median and standard deviation of the per-launch time; TFLOPS = flops / median with flops = 2 x B x Hq "
      "x (D + Dv) x visible (query, key) pairs; queries/s = B x Hq x Sq / median.";
  if (std::any_of(set.cases.begin(), set.cases.end(),
                  [](const CaseResult& c) { return c.padding_waste.has_value(); }))
    out +=
        " Padding waste (dense-bucketed cases, `@bucket=N`): the share of the launched (query, key) pairs "
        "that pad "
        "sequences to their bucket; TFLOPS count the real pairs only.";
  out += baseline.empty()
             ? " No baseline: pass --baseline KERNEL for speedups.\n\n"
             : fmt::format(" Speedup = the `{}` median on the same problem / this median.\n\n", baseline);
  std::vector<DType> dtypes;
  for (const CaseResult& c : set.cases) add_unique(dtypes, c.problem.dtype);
  bool any = false;
  for (const DType dt : dtypes) {
    const auto rows = ordered(set.cases, dt, true);
    if (rows.empty()) continue;
    any = true;
    // One unit per column (never "12.1 ms" above "45.6 µs"), scaled to the table's largest value:
    // µs for fast kernels, GFLOPS for a CPU run.
    double max_ms = 0, max_std = 0, max_tflops = 0;
    for (const CaseResult* c : rows) {
      max_ms = std::max(max_ms, *timed_median_ms(*c));
      max_std = std::max(max_std, c->timing->std_ms);
      if (c->tflops) max_tflops = std::max(max_tflops, *c->tflops);
    }
    const plot::UnitScale t_unit = plot::scaled_unit("ms", max_ms), s_unit = plot::scaled_unit("ms", max_std);
    const plot::UnitScale f_unit = plot::scaled_unit("TFLOPS", max_tflops);
    Table t({{"kernel"},
             {"config"},
             {fmt::format("median [{}]", t_unit.unit), Align::right},
             {fmt::format("std [{}]", s_unit.unit), Align::right},
             {f_unit.unit, Align::right},
             {"queries/s", Align::right}});
    if (!baseline.empty()) t.add_column("speedup vs " + baseline, Align::right);
    // Dense-bucketed cases (knob `bucket`): how much of their launched work was padding.
    const bool bucketed = std::any_of(rows.begin(), rows.end(),
                                      [](const CaseResult* c) { return c->padding_waste.has_value(); });
    if (bucketed) t.add_column("padding waste", Align::right);
    t.add_column("correctness");
    for (const CaseResult* c : rows) {
      std::vector<std::string> row{variant_label(*c),
                                   config_label(c->problem, c->knobs),
                                   format_fixed4(*timed_median_ms(*c) * t_unit.factor),
                                   format_fixed4(c->timing->std_ms * s_unit.factor),
                                   c->tflops ? format_fixed4(*c->tflops * f_unit.factor) : "-",
                                   c->queries_per_s ? si(*c->queries_per_s) : "-"};
      if (!baseline.empty()) {
        const auto s = speedup_over(set.cases, baseline, *c);
        row.push_back(s ? fmt::format("{:.2f}x", *s) : std::string("-"));
      }
      if (bucketed)
        row.push_back(c->padding_waste ? fmt::format("{:.1f}%", 100.0 * *c->padding_waste)
                                       : std::string("-"));
      row.push_back(c->correctness ? fmt::format("{:.1e} {}", c->correctness->rel_l2,
                                                 c->correctness->pass ? "pass" : "**FAIL**")
                                   : std::string("-"));
      t.add_row(std::move(row));
    }
    out += fmt::format("### {}\n\n", to_string(dt)) + t.markdown() + "\n";
  }
  if (!any) out += "No case was timed.\n\n";
  return out;
}

}  // namespace attn
