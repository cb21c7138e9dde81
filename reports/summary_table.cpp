// format_summary(): column layout, unit choice, baseline speedups and the status footer.
#include "reports/summary_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "reports/plot/units.hpp"
#include "reports/text_format.hpp"

namespace attn {

namespace {

constexpr std::size_t kNoteWidth = 60;  // [columns] reason text; the full text is in the files
constexpr std::array kAllStatuses{Status::ok,    Status::skipped, Status::mismatch, Status::oom,
                                  Status::fault, Status::timeout, Status::error};

struct Column {
  std::string header;
  bool right = false;  // numbers align right
  std::vector<std::string> cells;
};

std::optional<double> median_of(const CaseResult& c) {
  if (!c.timing) return std::nullopt;
  return c.timing->median_ms;
}

// The fastest ok baseline median on exactly this problem.
std::optional<double> baseline_median(const std::vector<CaseResult>& cases, const std::string& baseline,
                                      const Problem& p) {
  std::optional<double> best;
  for (const CaseResult& c : cases) {
    if (variant_label(c) != baseline || c.status != Status::ok || !(c.problem == p)) continue;
    const auto m = median_of(c);
    if (m && *m > 0 && (!best || *m < *best)) best = m;
  }
  return best;
}

std::string render(const std::vector<Column>& cols, std::size_t rows) {
  std::vector<std::size_t> width(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    width[i] = display_width(cols[i].header);
    for (const auto& cell : cols[i].cells) width[i] = std::max(width[i], display_width(cell));
  }
  auto line = [&](auto cell_of) {
    std::string s;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const std::string cell = cell_of(i);
      const std::string pad(width[i] - display_width(cell), ' ');
      if (i > 0) s += "  ";
      s += cols[i].right ? pad + cell : cell + pad;
    }
    s.erase(s.find_last_not_of(' ') + 1);
    return s + "\n";
  };
  std::string out = line([&](std::size_t i) { return cols[i].header; });
  out += line([&](std::size_t i) { return std::string(width[i], '-'); });
  for (std::size_t r = 0; r < rows; ++r) out += line([&](std::size_t i) { return cols[i].cells[r]; });
  return out;
}

}  // namespace

std::string format_summary(const std::vector<CaseResult>& cases, const std::string& baseline) {
  bool use_us = true;
  bool any_median = false;
  for (const CaseResult& c : cases) {
    if (const auto m = median_of(c)) {
      any_median = true;
      if (!(*m < 1.0)) use_us = false;
    }
  }
  use_us = use_us && any_median;
  const double scale = use_us ? 1e3 : 1.0;

  Column kernel{"kernel"}, config{"config"}, status{"status"};
  // GFLOPS for a CPU run rather than 0.0050 TFLOPS: one unit for the column, by its largest value.
  double max_tflops = 0;
  for (const CaseResult& c : cases)
    if (c.tflops) max_tflops = std::max(max_tflops, *c.tflops);
  const plot::UnitScale flops_unit = plot::scaled_unit("TFLOPS", max_tflops);
  Column median{use_us ? "median [µs]" : "median [ms]", true}, tflops{flops_unit.unit, true};
  Column speedup{"speedup vs " + baseline, true}, check{"correctness"}, note{"note"};
  for (const CaseResult& c : cases) {
    kernel.cells.push_back(variant_label(c));
    config.cells.push_back(config_label(c.problem, c.knobs));
    status.cells.emplace_back(to_string(c.status));
    const auto m = median_of(c);
    median.cells.push_back(m ? format_fixed4(*m * scale) : "-");
    tflops.cells.push_back(c.tflops ? format_fixed4(*c.tflops * flops_unit.factor) : "-");
    if (!baseline.empty()) {
      const auto base = baseline_median(cases, baseline, c.problem);
      speedup.cells.push_back(base && m && *m > 0 ? fmt::format("{:.2f}x", *base / *m) : "-");
    }
    if (c.correctness)
      check.cells.push_back(
          fmt::format("{:.1e} {}", c.correctness->rel_l2, c.correctness->pass ? "pass" : "FAIL"));
    else
      check.cells.emplace_back("-");
    note.cells.push_back(c.status == Status::ok ? std::string() : shorten(one_line(c.reason), kNoteWidth));
  }
  std::vector<Column> cols{kernel, config, status, median, tflops};
  if (!baseline.empty()) cols.push_back(speedup);
  cols.push_back(check);
  if (std::any_of(note.cells.begin(), note.cells.end(), [](const std::string& n) { return !n.empty(); }))
    cols.push_back(note);
  std::string out = render(cols, cases.size());

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
    if (c.status == Status::ok && std::find(measured.begin(), measured.end(), k) == measured.end())
      measured.push_back(k);
  }
  out += fmt::format("{} of {} kernels measured\n", measured.size(), kernels.size());
  return out;
}

}  // namespace attn
