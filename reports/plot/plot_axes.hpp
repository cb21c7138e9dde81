// The axis table behind plot_axes(), axis_label() and axis_values() (plot_build.hpp), shared by
// the plot builder and the axis queries.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "profiling/result.hpp"

namespace attn::plot {

struct AxisDef {
  std::string name;
  std::string label, unit;
  std::function<double(const CaseResult&)> number;     // null for a categorical axis
  std::function<std::string(const CaseResult&)> text;  // the series/subtitle form: "D=128", "fp16"
};

// Every axis, in the order plot_axes() lists them.
const std::vector<AxisDef>& axis_defs();
// The axis named `name`, or nullptr.
const AxisDef* find_axis(const std::string& name);
// The value of axis `a` of case `c` as --where compares it: the number for numeric axes, else
// the label text ("fp16", "causal", "non-causal", "win64,0", ...).
std::string where_text(const AxisDef& a, const CaseResult& c);

}  // namespace attn::plot
