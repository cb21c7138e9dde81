// The rows of the field catalogue (field_catalogue.hpp); their accessors are in field_access.hpp.
// A new metric: one row below (metrics.* rows read CUPTI names and roll up across kernels), its
// KernelMetrics member in result.hpp, and its line in docs/metrics.md.
#include "profiling/field_catalogue.hpp"

#include <array>
#include <cmath>

#include "profiling/field_access.hpp"
#include "profiling/metrics.hpp"

namespace attn {

namespace {

using namespace field_access;

// ---- the rows -------------------------------------------------------------------------------

constexpr const char* kDramRead[] = {metric::kDramRead};
constexpr const char* kDramWrite[] = {metric::kDramWrite};
constexpr const char* kDramBoth[] = {metric::kDramRead, metric::kDramWrite};
constexpr const char* kSm[] = {metric::kSmThroughput};
constexpr const char* kDram[] = {metric::kDramThroughput};
constexpr const char* kL2[] = {metric::kL2Throughput};
// All L2 traffic (every op, read and write), as ncu's L2 roofline counts it; no extra replay pass.
constexpr const char* kL2Bytes[] = {"lts__t_bytes.sum"};
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

// A phases.* row: seconds of one stage of the case (CasePhases).
#define ATTN_PHASE(NAME, LABEL)                                                                              \
  FieldDesc {                                                                                                \
    .path = "phases." #NAME, .name = "phase_" #NAME, .label = LABEL, .unit = "s", .higher_is_better = false, \
    .get = &get_in<&C::phases, &CasePhases::NAME>, .set = &set_in<&C::phases, &CasePhases::NAME>,            \
    .csv = true, .plot = true                                                                                \
  }
// A place.* row: where the case ran (CasePlace); text omitted while empty.
#define ATTN_PLACE_TEXT(NAME, LABEL)                                                               \
  FieldDesc {                                                                                      \
    .path = "place." #NAME, .name = #NAME, .label = LABEL, .type = FT::text,                       \
    .get = &get_in_text<&C::place, &CasePlace::NAME>, .set = &set_in<&C::place, &CasePlace::NAME>, \
    .csv = true                                                                                    \
  }
#define ATTN_PLACE_INT(NAME, LABEL)                                                                       \
  FieldDesc {                                                                                             \
    .path = "place." #NAME, .name = #NAME, .label = LABEL, .type = FT::int32,                             \
    .get = &get_in<&C::place, &CasePlace::NAME>, .set = &set_in<&C::place, &CasePlace::NAME>, .csv = true \
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
    ATTN_METRIC(l2_bytes, "L2 traffic", "B", false, Rollup::sum, kL2Bytes),
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
    // where the case ran
    ATTN_PLACE_TEXT(host, "Host"),
    ATTN_PLACE_INT(device_index, "Device index"),
    ATTN_PLACE_TEXT(device_name, "Device"),
    ATTN_PLACE_TEXT(device_uuid, "Device UUID"),
    ATTN_PLACE_TEXT(worker, "Worker"),
    ATTN_PLACE_INT(worker_slot, "Worker slot"),
    ATTN_PLACE_INT(worker_pid, "Worker pid"),
    ATTN_PLACE_INT(worker_start, "Worker start"),
    // where the case's wall time went
    ATTN_PHASE(prepare_s, "Prepare phase"),
    ATTN_PHASE(inputs_s, "Inputs phase"),
    ATTN_PHASE(reference_s, "Reference phase"),
    ATTN_PHASE(check_s, "Check phase"),
    ATTN_PHASE(warmup_s, "Warm-up phase"),
    ATTN_PHASE(timed_s, "Timed-samples phase"),
    ATTN_PHASE(metrics_s, "Metrics phase"),
    ATTN_PHASE(other_s, "Other time"),
};

#undef ATTN_METRIC
#undef ATTN_PHASE
#undef ATTN_PLACE_TEXT
#undef ATTN_PLACE_INT

constexpr std::array kGroups = {
    FieldGroup{"timing", [](C& c) { c.timing.emplace(); }},
    FieldGroup{"correctness", [](C& c) { c.correctness.emplace(); }},
    FieldGroup{"metrics", [](C& c) { c.metrics.emplace(); }},
    FieldGroup{"roofline", [](C& c) { c.roofline.emplace(); }},
    FieldGroup{"place", [](C& c) { c.place.emplace(); }},
    FieldGroup{"phases", [](C& c) { c.phases.emplace(); }},
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
