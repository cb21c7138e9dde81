// The rows of the field catalogue (field_catalogue.hpp) and the accessor templates behind them.
// A new metric: one row below (metrics.* rows read CUPTI names and roll up across kernels), its
// KernelMetrics member in result.hpp, and its line in docs/metrics.md.
#include "profiling/field_catalogue.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "profiling/metrics.hpp"

namespace attn {

namespace {

// ---- value conversion -----------------------------------------------------------------------

template <class T>
FieldValue to_value(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v;
  } else if constexpr (std::is_same_v<T, double>) {
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<std::int64_t>(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else {  // std::optional<X>
    if (!v) return std::monostate{};
    return to_value(*v);
  }
}

template <class T>
std::string from_value(const FieldValue& v, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!std::holds_alternative<bool>(v)) return "expected true or false";
    out = std::get<bool>(v);
  } else if constexpr (std::is_same_v<T, double>) {
    const auto x = numeric(v);
    if (!x) return "expected a number";
    out = *x;
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    if (!std::holds_alternative<std::int64_t>(v)) return "expected an integer";
    if (std::get<std::int64_t>(v) < 0) return "expected a non-negative bitmask";
    out = static_cast<std::uint64_t>(std::get<std::int64_t>(v));
  } else if constexpr (std::is_integral_v<T>) {
    if (!std::holds_alternative<std::int64_t>(v)) return "expected an integer";
    const std::int64_t x = std::get<std::int64_t>(v);
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max())
      return "integer " + std::to_string(x) + " is out of range";
    out = static_cast<T>(x);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!std::holds_alternative<std::string>(v)) return "expected a string";
    out = std::get<std::string>(v);
  } else {  // std::optional<X>
    typename T::value_type x{};
    if (auto why = from_value(v, x); !why.empty()) return why;
    out = x;
  }
  return {};
}

// ---- accessors ------------------------------------------------------------------------------

// A member of CaseResult.
template <auto M>
FieldValue get_top(const CaseResult& c) {
  return to_value(c.*M);
}
template <auto M>
std::string set_top(CaseResult& c, const FieldValue& v) {
  return from_value(v, c.*M);
}

// A text member the writer omits while empty.
template <auto M>
FieldValue get_text_if_set(const CaseResult& c) {
  if ((c.*M).empty()) return std::monostate{};
  return c.*M;
}

// Member M of the optional group G (timing, correctness, clocks, roofline); setting creates G.
template <auto G, auto M>
FieldValue get_in(const CaseResult& c) {
  const auto& g = c.*G;
  if (!g) return std::monostate{};
  return to_value((*g).*M);
}
template <auto G, auto M>
std::string set_in(CaseResult& c, const FieldValue& v) {
  auto& g = c.*G;
  // Into a copy first, so a rejected value leaves an absent group absent.
  auto group = g ? *g : typename std::remove_reference_t<decltype(g)>::value_type{};
  if (auto why = from_value(v, group.*M); !why.empty()) return why;
  g = std::move(group);
  return {};
}

// A member of the case's problem.
template <auto M>
FieldValue get_problem(const CaseResult& c) {
  return to_value(c.problem.*M);
}
template <auto M>
std::string set_problem(CaseResult& c, const FieldValue& v) {
  return from_value(v, c.problem.*M);
}

// A metric of the case's aggregate (metrics.<name>).
template <auto M>
FieldValue get_metric(const CaseResult& c) {
  if (!c.metrics) return std::monostate{};
  return to_value(c.metrics->aggregate.*M);
}
template <auto M>
std::string set_metric(CaseResult& c, const FieldValue& v) {
  std::optional<double> x;
  if (auto why = from_value(v, x); !why.empty()) return why;
  if (!c.metrics) c.metrics.emplace();
  c.metrics->aggregate.*M = x;
  return {};
}

FieldValue get_status(const CaseResult& c) { return std::string(to_string(c.status)); }
std::string set_status(CaseResult& c, const FieldValue& v) {
  std::string s;
  if (auto why = from_value(v, s); !why.empty()) return why;
  const auto st = parse_status(s);
  if (!st) return "expected ok, skipped, mismatch, oom, fault, timeout or error, got \"" + s + "\"";
  c.status = *st;
  return {};
}

FieldValue get_metrics_status(const CaseResult& c) {
  if (c.metrics_status == MetricsStatus::not_attempted) return std::monostate{};
  return std::string(to_string(c.metrics_status));
}
std::string set_metrics_status(CaseResult& c, const FieldValue& v) {
  std::string s;
  if (auto why = from_value(v, s); !why.empty()) return why;
  const auto st = parse_metrics_status(s);
  if (!st) return std::string("expected ") + kMetricsStatusAllowed + ", got \"" + s + "\"";
  c.metrics_status = *st;
  return {};
}

// "a=1;b=2" in the knobs' (sorted) order.
FieldValue get_knobs(const CaseResult& c) {
  std::string s;
  for (const auto& [name, value] : c.knobs) s += (s.empty() ? "" : ";") + name + "=" + std::to_string(value);
  return s;
}
std::string set_knobs(CaseResult& c, const FieldValue& v) {
  std::string s;
  if (auto why = from_value(v, s); !why.empty()) return why;
  Knobs knobs;
  std::size_t start = 0;
  while (start < s.size()) {
    const std::size_t end = std::min(s.find(';', start), s.size());
    const std::string item = s.substr(start, end - start);
    const std::size_t eq = item.find('=');
    int value = 0;
    const char* last = item.data() + item.size();
    if (eq == std::string::npos || eq == 0 ||
        std::from_chars(item.data() + eq + 1, last, value).ptr != last || eq + 1 == item.size())
      return "expected name=integer;..., got \"" + item + "\"";
    knobs[item.substr(0, eq)] = value;
    start = end + 1;
  }
  c.knobs = std::move(knobs);
  return {};
}

FieldValue get_dtype(const CaseResult& c) { return std::string(to_string(c.problem.dtype)); }
std::string set_dtype(CaseResult& c, const FieldValue& v) {
  std::string s;
  if (auto why = from_value(v, s); !why.empty()) return why;
  const auto dt = parse_dtype(s);
  if (!dt) return "expected fp16, bf16 or fp32, got \"" + s + "\"";
  c.problem.dtype = *dt;
  return {};
}

FieldValue get_window_left(const CaseResult& c) { return c.problem.window.left; }
std::string set_window_left(CaseResult& c, const FieldValue& v) {
  return from_value(v, c.problem.window.left);
}
FieldValue get_window_right(const CaseResult& c) { return c.problem.window.right; }
std::string set_window_right(CaseResult& c, const FieldValue& v) {
  return from_value(v, c.problem.window.right);
}

// ---- the rows -------------------------------------------------------------------------------

constexpr const char* kDramRead[] = {metric::kDramRead};
constexpr const char* kDramWrite[] = {metric::kDramWrite};
constexpr const char* kDramBoth[] = {metric::kDramRead, metric::kDramWrite};
constexpr const char* kSm[] = {metric::kSmThroughput};
constexpr const char* kDram[] = {metric::kDramThroughput};
constexpr const char* kL2[] = {metric::kL2Throughput};
constexpr const char* kPipe[] = {metric::kTensorPipe};
constexpr const char* kWarps[] = {metric::kWarpsActive};
constexpr const char* kTime[] = {metric::kGpuTime};
constexpr const char* kTensorFlops[] = {
    "sm__ops_path_tensor_src_fp16.sum",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
};
// The `_sparsity_off` forms carry the dense peak (4096 FLOP/SM/cycle on GH100); the aggregate
// src_* forms carry the sparse one, so they would read half.
constexpr const char* kTensorPeak[] = {
    "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.pct_of_peak_sustained_elapsed",
    "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed",
    "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum.pct_of_peak_sustained_elapsed",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed",
    "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed",
};

using C = CaseResult;
using T = TimingStats;
using K = Correctness;
using L = Clocks;
using R = Roofline;
using P = Problem;
using M = KernelMetrics;
using FT = FieldType;
constexpr double kMiB = 1.0 / (1024.0 * 1024.0);

// A metrics.* row: CUPTI names summed, rolled up across kernels by `rollup`.
constexpr FieldDesc metric_row(std::string_view name, std::string_view label, std::string_view unit, bool hib,
                               Rollup rollup, std::span<const char* const> cupti, std::optional<double> M::*m,
                               FieldValue (*get)(const C&), std::string (*set)(C&, const FieldValue&)) {
  FieldDesc f{};
  f.path = name;  // completed below: the codec's path is "metrics." + name
  f.name = name;
  f.label = label;
  f.unit = unit;
  f.higher_is_better = hib;
  f.rollup = rollup;
  f.cupti = cupti;
  f.metric = m;
  f.get = get;
  f.set = set;
  f.csv = true;
  f.plot = true;
  return f;
}

#define ATTN_METRIC(NAME, LABEL, UNIT, HIB, ROLLUP, CUPTI)                                            \
  [] {                                                                                                \
    FieldDesc f = metric_row(#NAME, LABEL, UNIT, HIB, ROLLUP, CUPTI, &M::NAME, &get_metric<&M::NAME>, \
                             &set_metric<&M::NAME>);                                                  \
    f.path = "metrics." #NAME;                                                                        \
    return f;                                                                                         \
  }()

const std::array kFields = {
    // identity and problem (the codec spells knobs and problem; CSV flattens them)
    FieldDesc{.path = "case_id",
              .name = "case_id",
              .label = "Case id",
              .type = FT::text,
              .get = &get_top<&C::case_id>,
              .set = &set_top<&C::case_id>,
              .required = true,
              .csv = true},
    FieldDesc{.path = "kernel",
              .name = "kernel",
              .label = "Kernel",
              .type = FT::text,
              .get = &get_top<&C::kernel>,
              .set = &set_top<&C::kernel>,
              .required = true,
              .csv = true},
    FieldDesc{.path = "knobs",
              .name = "knobs",
              .label = "Knobs",
              .type = FT::text,
              .get = &get_knobs,
              .set = &set_knobs,
              .json = false,
              .csv = true},
    FieldDesc{.path = "problem.batch",
              .name = "batch",
              .label = "Batch",
              .type = FT::int64,
              .get = &get_problem<&P::batch>,
              .set = &set_problem<&P::batch>,
              .json = false,
              .csv = true},
    FieldDesc{.path = "problem.heads_q",
              .name = "heads_q",
              .label = "Query heads",
              .type = FT::int64,
              .get = &get_problem<&P::heads_q>,
              .set = &set_problem<&P::heads_q>,
              .json = false,
              .csv = true},
    FieldDesc{.path = "problem.heads_kv",
              .name = "heads_kv",
              .label = "KV heads",
              .type = FT::int64,
              .get = &get_problem<&P::heads_kv>,
              .set = &set_problem<&P::heads_kv>,
              .json = false,
              .csv = true},
    FieldDesc{.path = "problem.seq_q",
              .name = "seq_q",
              .label = "Query length",
              .type = FT::int64,
              .get = &get_problem<&P::seq_q>,
              .set = &set_problem<&P::seq_q>,
              .json = false,
              .csv = true},
    FieldDesc{.path = "problem.seq_kv",
              .name = "seq_kv",
              .label = "Key length",
              .type = FT::int64,
              .get = &get_problem<&P::seq_kv>,
              .set = &set_problem<&P::seq_kv>,
              .json = false,
              .csv = true},
    FieldDesc{.path = "problem.head_dim",
              .name = "head_dim",
              .label = "Head dim",
              .type = FT::int64,
              .get = &get_problem<&P::head_dim>,
              .set = &set_problem<&P::head_dim>,
              .json = false,
              .csv = true},
    FieldDesc{.path = "problem.head_dim_v",
              .name = "head_dim_v",
              .label = "Value head dim",
              .type = FT::int64,
              .get = &get_problem<&P::head_dim_v>,
              .set = &set_problem<&P::head_dim_v>,
              .json = false,
              .csv = true},
    FieldDesc{.path = "problem.dtype",
              .name = "dtype",
              .label = "Data type",
              .type = FT::text,
              .get = &get_dtype,
              .set = &set_dtype,
              .json = false,
              .csv = true},
    FieldDesc{.path = "problem.causal",
              .name = "causal",
              .label = "Causal",
              .type = FT::boolean,
              .get = &get_problem<&P::causal>,
              .set = &set_problem<&P::causal>,
              .json = false,
              .csv = true},
    FieldDesc{.path = "problem.window[0]",
              .name = "window_left",
              .label = "Window left",
              .type = FT::int64,
              .get = &get_window_left,
              .set = &set_window_left,
              .json = false,
              .csv = true},
    FieldDesc{.path = "problem.window[1]",
              .name = "window_right",
              .label = "Window right",
              .type = FT::int64,
              .get = &get_window_right,
              .set = &set_window_right,
              .json = false,
              .csv = true},
    // outcome
    FieldDesc{.path = "status",
              .name = "status",
              .label = "Status",
              .type = FT::text,
              .get = &get_status,
              .set = &set_status,
              .required = true,
              .csv = true},
    FieldDesc{.path = "reason",
              .name = "reason",
              .label = "Reason",
              .type = FT::text,
              .get = &get_top<&C::reason>,
              .set = &set_top<&C::reason>,
              .csv = true},
    // timing
    FieldDesc{.path = "timing.median_ms",
              .name = "median_ms",
              .label = "Median time",
              .unit = "ms",
              .higher_is_better = false,
              .get = &get_in<&C::timing, &T::median_ms>,
              .set = &set_in<&C::timing, &T::median_ms>,
              .required = true,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "timing.min_ms",
              .name = "min_ms",
              .label = "Minimum time",
              .unit = "ms",
              .higher_is_better = false,
              .get = &get_in<&C::timing, &T::min_ms>,
              .set = &set_in<&C::timing, &T::min_ms>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "timing.max_ms",
              .name = "max_ms",
              .label = "Maximum time",
              .unit = "ms",
              .higher_is_better = false,
              .get = &get_in<&C::timing, &T::max_ms>,
              .set = &set_in<&C::timing, &T::max_ms>},
    FieldDesc{.path = "timing.mean_ms",
              .name = "mean_ms",
              .label = "Mean time",
              .unit = "ms",
              .higher_is_better = false,
              .get = &get_in<&C::timing, &T::mean_ms>,
              .set = &set_in<&C::timing, &T::mean_ms>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "timing.std_ms",
              .name = "std_ms",
              .label = "Time std. dev.",
              .unit = "ms",
              .higher_is_better = false,
              .get = &get_in<&C::timing, &T::std_ms>,
              .set = &set_in<&C::timing, &T::std_ms>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "timing.q1_ms",
              .name = "q1_ms",
              .label = "First quartile time",
              .unit = "ms",
              .higher_is_better = false,
              .get = &get_in<&C::timing, &T::q1_ms>,
              .set = &set_in<&C::timing, &T::q1_ms>,
              .csv = true},
    FieldDesc{.path = "timing.q3_ms",
              .name = "q3_ms",
              .label = "Third quartile time",
              .unit = "ms",
              .higher_is_better = false,
              .get = &get_in<&C::timing, &T::q3_ms>,
              .set = &set_in<&C::timing, &T::q3_ms>,
              .csv = true},
    FieldDesc{.path = "timing.samples",
              .name = "samples",
              .label = "Samples",
              .type = FT::int32,
              .get = &get_in<&C::timing, &T::samples>,
              .set = &set_in<&C::timing, &T::samples>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "timing.noise_pct",
              .name = "noise_pct",
              .label = "Noise of the median",
              .unit = "%",
              .higher_is_better = false,
              .get = &get_in<&C::timing, &T::noise_pct>,
              .set = &set_in<&C::timing, &T::noise_pct>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "timing.converged",
              .name = "converged",
              .label = "Converged",
              .type = FT::boolean,
              .get = &get_in<&C::timing, &T::converged>,
              .set = &set_in<&C::timing, &T::converged>},
    FieldDesc{.path = "timing.launches_per_sample",
              .name = "launches_per_sample",
              .label = "Launches per sample",
              .type = FT::int32,
              .get = &get_in<&C::timing, &T::launches_per_sample>,
              .set = &set_in<&C::timing, &T::launches_per_sample>},
    // counts and rates
    FieldDesc{.path = "flops",
              .name = "flops",
              .label = "FLOPs",
              .get = &get_top<&C::flops>,
              .set = &set_top<&C::flops>,
              .csv = true,
              .plot = true,
              .zero_is_absent = true},
    FieldDesc{.path = "min_bytes",
              .name = "min_bytes",
              .label = "Minimum bytes",
              .unit = "B",
              .type = FT::int64,
              .higher_is_better = false,
              .get = &get_top<&C::min_bytes>,
              .set = &set_top<&C::min_bytes>,
              .csv = true,
              .plot = true,
              .zero_is_absent = true},
    FieldDesc{.path = "tflops",
              .name = "tflops",
              .label = "Throughput",
              .unit = "TFLOPS",
              .get = &get_top<&C::tflops>,
              .set = &set_top<&C::tflops>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "gbps",
              .name = "gbps",
              .label = "Bandwidth (Q, K, V, O once)",
              .unit = "GB/s",
              .get = &get_top<&C::gbps>,
              .set = &set_top<&C::gbps>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "queries_per_s",
              .name = "queries_per_s",
              .label = "Queries",
              .unit = "1/s",
              .get = &get_top<&C::queries_per_s>,
              .set = &set_top<&C::queries_per_s>,
              .csv = true,
              .plot = true},
    // correctness
    FieldDesc{.path = "correctness.max_abs",
              .name = "max_abs",
              .label = "Max. abs. error",
              .higher_is_better = false,
              .get = &get_in<&C::correctness, &K::max_abs>,
              .set = &set_in<&C::correctness, &K::max_abs>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "correctness.rel_l2",
              .name = "rel_l2",
              .label = "Relative L2 error",
              .higher_is_better = false,
              .get = &get_in<&C::correctness, &K::rel_l2>,
              .set = &set_in<&C::correctness, &K::rel_l2>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "correctness.tol",
              .name = "tol",
              .label = "Tolerance on rel. L2",
              .get = &get_in<&C::correctness, &K::tol>,
              .set = &set_in<&C::correctness, &K::tol>,
              .csv = true},
    FieldDesc{.path = "correctness.pass",
              .name = "pass",
              .label = "Check passed",
              .type = FT::boolean,
              .get = &get_in<&C::correctness, &K::pass>,
              .set = &set_in<&C::correctness, &K::pass>,
              .required = true,
              .csv = true},
    FieldDesc{.path = "correctness.reference",
              .name = "reference",
              .label = "Reference",
              .type = FT::text,
              .get = &get_in<&C::correctness, &K::reference>,
              .set = &set_in<&C::correctness, &K::reference>},
    FieldDesc{.path = "correctness.tol_rule",
              .name = "tol_rule",
              .label = "Tolerance rule",
              .type = FT::text,
              .get = &get_in<&C::correctness, &K::tol_rule>,
              .set = &set_in<&C::correctness, &K::tol_rule>},
    FieldDesc{.path = "correctness.nonfinite",
              .name = "nonfinite",
              .label = "Non-finite outputs",
              .type = FT::int64,
              .higher_is_better = false,
              .get = &get_in<&C::correctness, &K::nonfinite>,
              .set = &set_in<&C::correctness, &K::nonfinite>},
    FieldDesc{.path = "correctness.sampled_rows_rel_l2",
              .name = "sampled_rows_rel_l2",
              .label = "Relative L2 error on sampled rows",
              .higher_is_better = false,
              .get = &get_in<&C::correctness, &K::sampled_rows_rel_l2>,
              .set = &set_in<&C::correctness, &K::sampled_rows_rel_l2>},
    FieldDesc{.path = "correctness.sampled_rows",
              .name = "sampled_rows",
              .label = "Sampled rows",
              .type = FT::int64,
              .get = &get_in<&C::correctness, &K::sampled_rows>,
              .set = &set_in<&C::correctness, &K::sampled_rows>},
    // memory and clocks
    FieldDesc{.path = "memory.device_bytes_peak",
              .name = "device_bytes_peak",
              .label = "Peak device memory",
              .unit = "B",
              .type = FT::int64,
              .higher_is_better = false,
              .get = &get_top<&C::device_bytes_peak>,
              .set = &set_top<&C::device_bytes_peak>,
              .csv = true,
              .plot = true,
              .plot_scale = kMiB,
              .plot_unit = "MiB"},
    FieldDesc{.path = "clocks.sm_mhz",
              .name = "sm_mhz",
              .label = "SM clock",
              .unit = "MHz",
              .get = &get_in<&C::clocks, &L::sm_mhz>,
              .set = &set_in<&C::clocks, &L::sm_mhz>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "clocks.temp_c",
              .name = "temp_c",
              .label = "Temperature",
              .unit = "°C",
              .higher_is_better = false,
              .get = &get_in<&C::clocks, &L::temp_c>,
              .set = &set_in<&C::clocks, &L::temp_c>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "clocks.power_w",
              .name = "power_w",
              .label = "Power",
              .unit = "W",
              .higher_is_better = false,
              .get = &get_in<&C::clocks, &L::power_w>,
              .set = &set_in<&C::clocks, &L::power_w>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "clocks.mem_mhz",
              .name = "mem_mhz",
              .label = "Memory clock",
              .unit = "MHz",
              .get = &get_in<&C::clocks, &L::mem_mhz>,
              .set = &set_in<&C::clocks, &L::mem_mhz>,
              .plot = true},
    FieldDesc{.path = "clocks.sm_mhz_min",
              .name = "sm_mhz_min",
              .label = "Lowest SM clock",
              .unit = "MHz",
              .get = &get_in<&C::clocks, &L::sm_mhz_min>,
              .set = &set_in<&C::clocks, &L::sm_mhz_min>},
    FieldDesc{.path = "clocks.clocks_dropped",
              .name = "clocks_dropped",
              .label = "SM clock dropped",
              .type = FT::boolean,
              .get = &get_in<&C::clocks, &L::clocks_dropped>,
              .set = &set_in<&C::clocks, &L::clocks_dropped>},
    FieldDesc{.path = "clocks.throttle_mask",
              .name = "throttle_mask",
              .label = "Clock-event reasons",
              .type = FT::int64,
              .get = &get_in<&C::clocks, &L::throttle_mask>,
              .set = &set_in<&C::clocks, &L::throttle_mask>},
    // bookkeeping
    FieldDesc{.path = "nvtx_range",
              .name = "nvtx_range",
              .label = "NVTX range",
              .type = FT::text,
              .get = &get_top<&C::nvtx_range>,
              .set = &set_top<&C::nvtx_range>},
    FieldDesc{.path = "wall_s",
              .name = "wall_s",
              .label = "Wall time per case",
              .unit = "s",
              .higher_is_better = false,
              .get = &get_top<&C::wall_s>,
              .set = &set_top<&C::wall_s>,
              .plot = true,
              .zero_is_absent = true},
    FieldDesc{.path = "ncu_command",
              .name = "ncu_command",
              .label = "Nsight Compute command",
              .type = FT::text,
              .get = &get_text_if_set<&C::ncu_command>,
              .set = &set_top<&C::ncu_command>},
    // beyond the first CSV columns: variant, metrics, roofline
    FieldDesc{.path = "variant",
              .name = "variant",
              .label = "Variant",
              .type = FT::text,
              .get = &get_text_if_set<&C::variant>,
              .set = &set_top<&C::variant>,
              .csv = true},
    FieldDesc{.path = "metrics_status",
              .name = "metrics_status",
              .label = "Metrics status",
              .type = FT::text,
              .get = &get_metrics_status,
              .set = &set_metrics_status,
              .csv = true},
    FieldDesc{.path = "metrics_reason",
              .name = "metrics_reason",
              .label = "Metrics reason",
              .type = FT::text,
              .get = &get_text_if_set<&C::metrics_reason>,
              .set = &set_top<&C::metrics_reason>},
    // CUPTI metrics, in collection order (default_metric_names)
    ATTN_METRIC(sm_throughput_pct, "SM throughput", "%", true, Rollup::time_weighted_mean, kSm),
    ATTN_METRIC(dram_throughput_pct, "DRAM throughput", "%", true, Rollup::time_weighted_mean, kDram),
    ATTN_METRIC(dram_bytes_read, "DRAM bytes read", "B", false, Rollup::sum, kDramRead),
    ATTN_METRIC(dram_bytes_write, "DRAM bytes written", "B", false, Rollup::sum, kDramWrite),
    ATTN_METRIC(dram_bytes, "DRAM traffic", "B", false, Rollup::sum, kDramBoth),
    ATTN_METRIC(l2_throughput_pct, "L2 throughput", "%", true, Rollup::time_weighted_mean, kL2),
    ATTN_METRIC(tensor_pipe_pct, "Tensor pipe utilisation", "%", true, Rollup::time_weighted_mean, kPipe),
    ATTN_METRIC(achieved_occupancy_pct, "Achieved occupancy", "%", true, Rollup::time_weighted_mean, kWarps),
    ATTN_METRIC(gpu_time_ns, "GPU time", "ns", false, Rollup::sum, kTime),
    ATTN_METRIC(tensor_flops, "Tensor-core FLOPs", "", true, Rollup::sum, kTensorFlops),
    ATTN_METRIC(tensor_pct_of_peak, "Tensor throughput", "% of peak", true, Rollup::time_weighted_mean,
                kTensorPeak),
    // roofline
    FieldDesc{.path = "roofline.algorithmic_intensity",
              .name = "algorithmic_intensity",
              .label = "Arithmetic intensity",
              .unit = "FLOP/B",
              .get = &get_in<&C::roofline, &R::algorithmic_intensity>,
              .set = &set_in<&C::roofline, &R::algorithmic_intensity>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "roofline.achieved_intensity",
              .name = "achieved_intensity",
              .label = "Achieved intensity",
              .unit = "FLOP/B",
              .get = &get_in<&C::roofline, &R::achieved_intensity>,
              .set = &set_in<&C::roofline, &R::achieved_intensity>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "roofline.peak_tflops",
              .name = "roofline_peak_tflops",
              .label = "Tensor ceiling",
              .unit = "TFLOPS",
              .get = &get_in<&C::roofline, &R::peak_tflops>,
              .set = &set_in<&C::roofline, &R::peak_tflops>,
              .csv = true},
    FieldDesc{.path = "roofline.peak_gbps",
              .name = "roofline_peak_gbps",
              .label = "Memory ceiling",
              .unit = "GB/s",
              .get = &get_in<&C::roofline, &R::peak_gbps>,
              .set = &set_in<&C::roofline, &R::peak_gbps>,
              .csv = true},
    FieldDesc{.path = "roofline.peak_source",
              .name = "roofline_peak_source",
              .label = "Ceiling source",
              .type = FT::text,
              .get = &get_in<&C::roofline, &R::peak_source>,
              .set = &set_in<&C::roofline, &R::peak_source>,
              .csv = true},
    FieldDesc{.path = "roofline.ridge_intensity",
              .name = "ridge_intensity",
              .label = "Ridge intensity",
              .unit = "FLOP/B",
              .get = &get_in<&C::roofline, &R::ridge_intensity>,
              .set = &set_in<&C::roofline, &R::ridge_intensity>,
              .csv = true},
    FieldDesc{.path = "roofline.attainable_tflops",
              .name = "attainable_tflops",
              .label = "Attainable throughput",
              .unit = "TFLOPS",
              .get = &get_in<&C::roofline, &R::attainable_tflops>,
              .set = &set_in<&C::roofline, &R::attainable_tflops>,
              .csv = true},
    FieldDesc{.path = "roofline.pct_of_roofline",
              .name = "pct_of_roofline",
              .label = "Roofline attainment",
              .unit = "%",
              .get = &get_in<&C::roofline, &R::pct_of_roofline>,
              .set = &set_in<&C::roofline, &R::pct_of_roofline>,
              .csv = true,
              .plot = true},
    FieldDesc{.path = "roofline.bound",
              .name = "roofline_bound",
              .label = "Bound",
              .type = FT::text,
              .get = &get_in<&C::roofline, &R::bound>,
              .set = &set_in<&C::roofline, &R::bound>,
              .csv = true},
};

#undef ATTN_METRIC

constexpr std::array kGroups = {
    FieldGroup{"timing", [](C& c) { c.timing.emplace(); }},
    FieldGroup{"correctness", [](C& c) { c.correctness.emplace(); }},
    FieldGroup{"metrics", [](C& c) { c.metrics.emplace(); }},
    FieldGroup{"roofline", [](C& c) { c.roofline.emplace(); }},
};

}  // namespace

std::span<const FieldDesc> case_fields() { return kFields; }

const FieldDesc* find_field(std::string_view name) {
  for (const FieldDesc& f : kFields)
    if (f.name == name) return &f;
  return nullptr;
}

std::span<const FieldGroup> case_field_groups() { return kGroups; }

std::optional<double> numeric(const FieldValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
  return std::nullopt;
}

std::optional<double> plot_value(const FieldDesc& f, const CaseResult& c) {
  const auto v = numeric(f.get(c));
  if (!v || !std::isfinite(*v) || (f.zero_is_absent && !(*v > 0))) return std::nullopt;
  return *v * f.plot_scale;
}

std::string_view display_unit(const FieldDesc& f) { return f.plot_unit.empty() ? f.unit : f.plot_unit; }

}  // namespace attn
