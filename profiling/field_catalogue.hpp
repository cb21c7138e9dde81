// The field catalogue: one descriptor per scalar field of a case record (attnscope.result.v1) with
// its JSON key path, label, unit, direction, roll-up over a case's kernels, CUPTI source and
// accessors. The JSON codec, CSV, plots, report, GUI inspector and metric aggregation loop over it,
// so a new metric is one row in field_catalogue.cpp plus its line in docs/metrics.md.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "profiling/result.hpp"

namespace attn {

// How a metric combines across the kernels of a case.
enum class Rollup { sum, max, min, time_weighted_mean };

// The JSON type of a field; int32 and int64 differ only in the range a reader accepts.
enum class FieldType { real, int32, int64, boolean, text };

// A field's value; monostate = absent (an optional not measured, or a text the writer omits).
using FieldValue = std::variant<std::monostate, double, std::int64_t, bool, std::string>;

struct FieldDesc {
  std::string_view path;   // key path in the case record: "tflops", "timing.median_ms"
  std::string_view name;   // unique short name: CSV column, plot y name, report column
  std::string_view label;  // for people: "Median time"
  std::string_view unit;   // "ms", "%", "B"; empty when unitless
  FieldType type = FieldType::real;
  bool higher_is_better = true;
  Rollup rollup = Rollup::time_weighted_mean;  // across a case's kernels (metrics.* rows)
  // CUPTI metrics whose sum is this field (metrics.* rows); a field is absent unless all are present.
  std::span<const char* const> cupti;
  // The per-kernel member for metrics.* rows (also the aggregate's); nullptr for other rows.
  std::optional<double> KernelMetrics::*metric = nullptr;
  FieldValue (*get)(const CaseResult&) = nullptr;
  // Stores `v` (of this row's type); returns what is wrong with it, empty when it was stored.
  std::string (*set)(CaseResult&, const FieldValue& v) = nullptr;
  bool json = true;             // read and written by the codec's loop (false: the codec spells it)
  bool required = false;        // a reader fails when it is missing (and its parent object is present)
  bool csv = false;             // a results.csv column
  bool plot = false;            // a plot y name (reports/plot)
  bool zero_is_absent = false;  // a plain number whose 0 means "not measured" (for plots)
  double plot_scale = 1;        // plots show value * plot_scale in plot_unit
  std::string_view plot_unit;   // empty = unit
};

// Every row, in catalogue order: results.csv's column order, and for metrics.* rows the order
// of collection (default_metric_names) and of the report's metric columns.
std::span<const FieldDesc> case_fields();
// The row named `name`, or nullptr.
const FieldDesc* find_field(std::string_view name);

// A numeric value as a double (int and bool rows included), nullopt when absent or non-numeric.
std::optional<double> numeric(const FieldValue& v);
// The value a plot draws: numeric, finite, scaled by plot_scale; nullopt when absent, non-finite
// or (zero_is_absent) zero.
std::optional<double> plot_value(const FieldDesc& f, const CaseResult& c);
// The unit plots and the GUI show (plot_unit, else unit).
std::string_view display_unit(const FieldDesc& f);

// Parent objects that exist in a record as a whole: a reader creates the member when the JSON
// object is present, even with no known field inside ("timing", "correctness", "metrics", "roofline").
struct FieldGroup {
  std::string_view key;
  void (*emplace)(CaseResult&);
};
std::span<const FieldGroup> case_field_groups();

}  // namespace attn
