// Reading catalogue values (field_catalogue.hpp): a value as a number, a plot's y, its display unit.
#include <cmath>

#include "profiling/field_catalogue.hpp"

namespace attn {

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
