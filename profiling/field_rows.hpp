// How a row of the field catalogue is built: the CUPTI names the metrics.* rows sum, short aliases
// of the record types, and the row makers (metric_row and the ATTN_* macros) that field_catalogue.cpp
// lists its rows with. Only field_catalogue.cpp includes this (it #undefs the macros at its end).
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "profiling/field_access.hpp"
#include "profiling/field_catalogue.hpp"
#include "profiling/metrics.hpp"

namespace attn::field_rows {

using namespace field_access;

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
inline constexpr FieldDesc metric_row(std::string_view name, std::string_view label, std::string_view unit,
                                      bool hib, Rollup rollup, std::span<const char* const> cupti,
                                      std::optional<double> M::*m, FieldValue (*get)(const C&),
                                      std::string (*set)(C&, const FieldValue&)) {
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

}  // namespace attn::field_rows
