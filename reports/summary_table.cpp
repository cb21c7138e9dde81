// format_summary(): column layout, unit choice, baseline speedups and the status footer.
#include "reports/summary_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "reports/case_query.hpp"
#include "reports/plot/units.hpp"
#include "reports/table.hpp"
#include "reports/text_format.hpp"

namespace attn {

namespace {

constexpr std::size_t kNoteWidth = 60;  // [columns] reason text; the full text is in the files
constexpr std::array kAllStatuses{Status::ok,    Status::skipped, Status::mismatch, Status::oom,
                                  Status::fault, Status::timeout, Status::error};

// O's error, or for a backward the first failing gradient, else the worst ("dK 2.1e-3 pass"). A
// forward that failed its check shows as O's.
std::string check_cell(const CaseResult& c) {
  auto cell = [](const char* name, const Correctness& x) {
    return fmt::format("{}{:.1e} {}", name, x.rel_l2, x.pass ? "pass" : "FAIL");
  };
  if (c.correctness && !c.correctness->pass) return cell("", *c.correctness);
  const Correctness* worst = nullptr;
  const char* worst_name = "";
  for (const auto& [name, grad] : {std::pair{"dQ ", &c.grad_dq}, {"dK ", &c.grad_dk}, {"dV ", &c.grad_dv}}) {
    if (!*grad) continue;
    const Correctness& x = **grad;
    if (!x.pass) return cell(name, x);
    if (!worst || x.rel_l2 > worst->rel_l2) worst = &x, worst_name = name;
  }
  if (worst) return cell(worst_name, *worst);
  return c.correctness ? cell("", *c.correctness) : std::string("-");
}

}  // namespace

std::string format_summary(const std::vector<CaseResult>& cases, const std::string& baseline) {
  bool use_us = true;
  bool any_median = false;
  for (const CaseResult& c : cases) {
    if (const auto m = timed_median_ms(c)) {
      any_median = true;
      if (!(*m < 1.0)) use_us = false;
    }
  }
  use_us = use_us && any_median;
  const double scale = use_us ? 1e3 : 1.0;

  const bool notes = std::any_of(cases.begin(), cases.end(), [](const CaseResult& c) {
    return c.status != Status::ok && !one_line(c.reason).empty();
  });
  // GFLOPS for a CPU run rather than 0.0050 TFLOPS: one unit for the column, by its largest value.
  double max_tflops = 0;
  for (const CaseResult& c : cases)
    if (c.tflops) max_tflops = std::max(max_tflops, *c.tflops);
  const plot::UnitScale flops_unit = plot::scaled_unit("TFLOPS", max_tflops);
  Table table;
  table.add_column("kernel");
  table.add_column("config");
  table.add_column("status");
  table.add_column(use_us ? "median [µs]" : "median [ms]", Align::right);
  table.add_column(flops_unit.unit, Align::right);
  if (!baseline.empty()) table.add_column("speedup vs " + baseline, Align::right);
  table.add_column("correctness");
  if (notes) table.add_column("note");
  for (const CaseResult& c : cases) {
    std::vector<std::string> row{variant_label(c), config_label(c.problem, c.knobs),
                                 std::string(to_string(c.status))};
    const auto m = timed_median_ms(c);
    row.push_back(m ? format_fixed4(*m * scale) : "-");
    row.push_back(c.tflops ? format_fixed4(*c.tflops * flops_unit.factor) : "-");
    if (!baseline.empty()) {
      const auto s = speedup_over(cases, baseline, c);
      row.push_back(s ? fmt::format("{:.2f}x", *s) : "-");
    }
    row.push_back(check_cell(c));
    if (notes)
      row.push_back(c.status == Status::ok ? std::string() : shorten(one_line(c.reason), kNoteWidth));
    table.add_row(std::move(row));
  }
  std::string out = table.text();

  std::string counts;
  for (const Status s : kAllStatuses) {
    const auto n =
        std::count_if(cases.begin(), cases.end(), [&](const CaseResult& c) { return c.status == s; });
    if (n == 0) continue;
    counts += fmt::format("{}{} {}", counts.empty() ? ": " : ", ", n, to_string(s));
  }
  out += fmt::format("\n{} {}{}\n", cases.size(), cases.size() == 1 ? "case" : "cases", counts);

  std::vector<std::string> kernels, measured;
  for (const CaseResult& c : cases) {
    const std::string& k = variant_label(c);  // two variants of a kernel count as two
    if (std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(k);
    if (is_measured(c) && std::find(measured.begin(), measured.end(), k) == measured.end())
      measured.push_back(k);
  }
  out += fmt::format("{} of {} kernels measured\n", measured.size(), kernels.size());
  return out;
}

}  // namespace attn
