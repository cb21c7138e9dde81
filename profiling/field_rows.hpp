// How a row of the field catalogue is built: short aliases
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
// A grad_check.<grad>.* row: one error statistic of one gradient (GRAD is dq, dk or dv).
#define ATTN_GRAD(GRAD, MEMBER, TYPE, LABEL, CSV)                                                     \
  FieldDesc {                                                                                         \
    .path = "grad_check." #GRAD "." #MEMBER, .name = #GRAD "_" #MEMBER, .label = LABEL, .type = TYPE, \
    .higher_is_better = false, .get = &get_in<&C::grad_##GRAD, &K::MEMBER>,                           \
    .set = &set_in<&C::grad_##GRAD, &K::MEMBER>, .csv = CSV, .plot = CSV                              \
  }
#define ATTN_GRAD_ROWS(GRAD, NAME)                                                                       \
  ATTN_GRAD(GRAD, max_abs, FT::real, NAME " max. abs. error", false),                                    \
      ATTN_GRAD(GRAD, rel_l2, FT::real, NAME " relative L2 error", true),                                \
      ATTN_GRAD(GRAD, tol, FT::real, NAME " tolerance on rel. L2", false),                               \
      ATTN_GRAD(GRAD, pass, FT::boolean, NAME " check passed", false),                                   \
      ATTN_GRAD(GRAD, nonfinite, FT::int64, NAME " non-finite values", false), FieldDesc {               \
    .path = "grad_check." #GRAD ".tol_rule", .name = #GRAD "_tol_rule", .label = NAME " tolerance rule", \
    .type = FT::text, .get = &get_in<&C::grad_##GRAD, &K::tol_rule>,                                     \
    .set = &set_in<&C::grad_##GRAD, &K::tol_rule>                                                        \
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

// A metrics.* row from a line of profiling/metric_list.def: `...` are the CUPTI names it sums.
#define ATTN_METRIC_ROW(NAME, LABEL, UNIT, HIB, ROLLUP, ...)                            \
  [] {                                                                                  \
    static constexpr const char* kNames[] = {__VA_ARGS__};                              \
    FieldDesc f = metric_row(#NAME, LABEL, UNIT, HIB, Rollup::ROLLUP, kNames, &M::NAME, \
                             &get_metric<&M::NAME>, &set_metric<&M::NAME>);             \
    f.path = "metrics." #NAME;                                                          \
    return f;                                                                           \
  }()

}  // namespace attn::field_rows
