// Report section: forward and backward side by side, the table of the FlashAttention-2 guide:
// forward ms | backward ms | backward/forward | fwd+bwd ms, with each pass's throughput, achieved
// bandwidth (its minimum bytes over its time) and device memory peak. Only when the results hold
// a backward pass.
#include <fmt/format.h>

#include <map>
#include <optional>

#include "reports/case_query.hpp"
#include "reports/sections/section.hpp"
#include "reports/sections/section_util.hpp"
#include "reports/table.hpp"
#include "reports/text_format.hpp"

namespace attn {

namespace {

struct PassRow {
  const CaseResult* by_pass[3] = {nullptr, nullptr, nullptr};  // fwd, bwd, fwd+bwd
};

// The median of a measured case; 0 when there is none.
double median_of(const CaseResult* c) {
  if (!c || !is_measured(*c)) return 0;
  return timed_median_ms(*c).value_or(0.0);
}

std::string ms(const CaseResult* c) {
  const auto m = c ? timed_median_ms(*c) : std::nullopt;
  return m && is_measured(*c) ? fmt::format("{:.4g}", *m) : std::string("-");
}

std::string rate(const CaseResult* c) {
  if (!c || !is_measured(*c) || !c->tflops) return "-";
  std::string s = fmt::format("{:.4g}", *c->tflops);
  if (c->gbps) s += fmt::format(" / {:.4g}", *c->gbps);
  return s;
}

std::string peak(const CaseResult* c) {
  if (!c || !c->device_bytes_peak) return "-";
  const std::int64_t bytes = *c->device_bytes_peak;
  return bytes >= (std::int64_t{1} << 30) ? gib(bytes) : mib(bytes);
}

}  // namespace

std::string passes_section(const ReportContext& ctx) {
  bool any_backward = false;
  for (const CaseResult& c : ctx.set.cases) any_backward |= has_backward(c.problem.pass);
  if (!any_backward) return {};

  // One row per (kernel variant, problem less its pass), in first-appearance order.
  std::vector<std::pair<std::string, Problem>> keys;
  std::map<std::size_t, PassRow> rows;
  for (const CaseResult& c : ctx.set.cases) {
    Problem shape = c.problem;
    shape.pass = Pass::fwd;
    const std::pair<std::string, Problem> key{variant_label(c), shape};
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) it = keys.insert(keys.end(), key);
    rows[static_cast<std::size_t>(it - keys.begin())].by_pass[static_cast<int>(c.problem.pass)] = &c;
  }

  std::string out = "## Forward and backward\n\n";
  out +=
      "Median ms of each pass as measured (fwd+bwd is its own timed case, not a sum), the backward over "
      "the forward, TFLOPS / GB/s of each pass (backward FLOPs = 2.5x the forward's; bytes = each "
      "tensor the pass reads or writes once) and the device memory peak of each case.\n\n";
  Table t({{"kernel"},
           {"config"},
           {"fwd ms", Align::right},
           {"bwd ms", Align::right},
           {"bwd/fwd", Align::right},
           {"fwd+bwd ms", Align::right},
           {"fwd TFLOPS / GB/s", Align::right},
           {"bwd TFLOPS / GB/s", Align::right},
           {"fwd+bwd TFLOPS / GB/s", Align::right},
           {"memory fwd / bwd", Align::right}});
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const PassRow& r = rows[i];
    const CaseResult *f = r.by_pass[0], *b = r.by_pass[1], *fb = r.by_pass[2];
    if (!b && !fb) continue;  // forward-only kernels are in the results table
    std::string ratio = "-";
    const double fm = median_of(f), bm = median_of(b);
    if (fm > 0 && bm > 0) ratio = fmt::format("{:.2f}", bm / fm);
    t.add_row({keys[i].first, config_label(keys[i].second), ms(f), ms(b), ratio, ms(fb), rate(f), rate(b),
               rate(fb), peak(f) + " / " + peak(b)});
  }
  return out + t.markdown() + "\n";
}

}  // namespace attn
