// Typed get/set helpers behind the rows of the field catalogue (field_catalogue.cpp): conversion
// between a field and FieldValue, and accessors for CaseResult members, members of its optional
// groups, its problem and its metrics aggregate. Only the catalogue (field_catalogue.cpp, through
// field_rows.hpp) includes this.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "profiling/field_catalogue.hpp"

namespace attn::field_access {

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

// A text member of the optional group G, omitted while empty.
template <auto G, auto M>
FieldValue get_in_text(const CaseResult& c) {
  const auto& g = c.*G;
  if (!g || ((*g).*M).empty()) return std::monostate{};
  return (*g).*M;
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

// Member M of the problem's part P (window, compress, select).
template <auto P, auto M>
FieldValue get_problem_part(const CaseResult& c) {
  return to_value((c.problem.*P).*M);
}
template <auto P, auto M>
std::string set_problem_part(CaseResult& c, const FieldValue& v) {
  return from_value(v, (c.problem.*P).*M);
}
// A text member of the problem's part P, omitted while empty.
template <auto P, auto M>
FieldValue get_problem_part_text(const CaseResult& c) {
  const std::string& text = (c.problem.*P).*M;
  if (text.empty()) return std::monostate{};
  return text;
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

// Fields whose JSON text is not the member's own type (enums, knobs text, window bounds).
FieldValue get_status(const CaseResult& c);
std::string set_status(CaseResult& c, const FieldValue& v);
FieldValue get_metrics_status(const CaseResult& c);
std::string set_metrics_status(CaseResult& c, const FieldValue& v);
FieldValue get_knobs(const CaseResult& c);
std::string set_knobs(CaseResult& c, const FieldValue& v);
FieldValue get_dtype(const CaseResult& c);
FieldValue get_pass(const CaseResult& c);
std::string set_pass(CaseResult& c, const FieldValue& v);
std::string set_dtype(CaseResult& c, const FieldValue& v);
FieldValue get_select_seed(const CaseResult& c);
std::string set_select_seed(CaseResult& c, const FieldValue& v);

}  // namespace attn::field_access
