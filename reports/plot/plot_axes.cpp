// The axes a plot can sweep, group, facet or filter by: their names, labels and values.
#include "reports/plot/plot_axes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <tuple>

#include "reports/plot/plot_build.hpp"

namespace attn::plot {

namespace {

std::string knobs_text(const Knobs& k) {
  if (k.empty()) return "default knobs";
  std::string s;
  for (const auto& [name, value] : k) s += (s.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return s;
}

std::function<std::string(const CaseResult&)> prefixed(std::string prefix,
                                                       std::function<double(const CaseResult&)> f) {
  return [prefix = std::move(prefix), f = std::move(f)](const CaseResult& c) {
    return prefix + fmt::format("{}", static_cast<long long>(f(c)));
  };
}

}  // namespace

const std::vector<AxisDef>& axis_defs() {
  static const std::vector<AxisDef> defs = [] {
    std::vector<AxisDef> v;
    auto num = [&](std::string name, std::string label, std::string unit, std::string prefix,
                   std::function<double(const CaseResult&)> f) {
      v.push_back({std::move(name), std::move(label), std::move(unit), f, prefixed(std::move(prefix), f)});
    };
    auto cat = [&](std::string name, std::string label, std::function<std::string(const CaseResult&)> f) {
      v.push_back({std::move(name), std::move(label), "", nullptr, std::move(f)});
    };
    auto d = [](std::int64_t x) { return static_cast<double>(x); };
    num("batch", "Batch size", "", "B=", [=](const CaseResult& c) { return d(c.problem.batch); });
    num("tokens", "Tokens", "tokens", "T=", [=](const CaseResult& c) { return d(c.problem.total_q()); });
    num("heads", "Query heads", "", "H=", [=](const CaseResult& c) { return d(c.problem.heads_q); });
    num("heads_kv", "KV heads", "", "Hkv=", [=](const CaseResult& c) { return d(c.problem.heads_kv); });
    num("hidden", "Hidden size", "",
        "hidden=", [=](const CaseResult& c) { return d(c.problem.heads_q * c.problem.head_dim); });
    num("seq", "Sequence length", "tokens", "S=", [=](const CaseResult& c) { return d(c.problem.seq_q); });
    num("seq_q", "Query length", "tokens", "Sq=", [=](const CaseResult& c) { return d(c.problem.seq_q); });
    num("seq_kv", "Key/value length", "tokens",
        "Sk=", [=](const CaseResult& c) { return d(c.problem.seq_kv); });
    num("head_dim", "Head dimension", "", "D=", [=](const CaseResult& c) { return d(c.problem.head_dim); });
    num("head_dim_v", "Value head dimension", "",
        "Dv=", [=](const CaseResult& c) { return d(c.problem.head_dim_v); });
    cat("dtype", "Data type", [](const CaseResult& c) { return std::string(to_string(c.problem.dtype)); });
    cat("causal", "Mask",
        [](const CaseResult& c) { return std::string(c.problem.causal ? "causal" : "non-causal"); });
    cat("window", "Window", [](const CaseResult& c) {
      const Window& w = c.problem.window;
      return w.active() ? fmt::format("win{},{}", w.left, w.right) : std::string("no window");
    });
    cat("mask", "Mask", [](const CaseResult& c) { return c.problem.mask_label(); });
    cat("pass", "Pass", [](const CaseResult& c) { return std::string(to_string(c.problem.pass)); });
    cat("knobs", "Knobs", [](const CaseResult& c) { return knobs_text(c.knobs); });
    // The device kind (its name) and the host: series split by them only when they vary.
    cat("device", "Device",
        [](const CaseResult& c) { return c.place ? c.place->device_name : std::string(); });
    cat("host", "Host", [](const CaseResult& c) { return c.place ? c.place->host : std::string(); });
    return v;
  }();
  return defs;
}

const AxisDef* find_axis(const std::string& name) {
  for (const AxisDef& a : axis_defs())
    if (a.name == name) return &a;
  return nullptr;
}

std::string where_text(const AxisDef& a, const CaseResult& c) {
  return a.number ? fmt::format("{}", static_cast<long long>(a.number(c))) : a.text(c);
}

const std::vector<std::string>& plot_axes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const AxisDef& a : axis_defs()) v.push_back(a.name);
    return v;
  }();
  return names;
}

std::string axis_label(const std::string& axis) {
  const AxisDef* a = find_axis(axis);
  return a ? a->label : axis;
}

std::vector<std::pair<std::string, std::string>> axis_values(const std::vector<LoadedRun>& runs,
                                                             const std::string& axis) {
  const AxisDef* a = find_axis(axis);
  if (!a)
    throw PlotSpecError("--facet " + axis +
                        ": unknown axis; allowed: " + fmt::format("{}", fmt::join(plot_axes(), ", ")));
  std::vector<std::tuple<double, std::string, std::string>> v;
  for (const LoadedRun& r : runs)
    for (const CaseResult& c : r.cases) {
      if (c.status != Status::ok) continue;
      std::tuple<double, std::string, std::string> e{a->number ? a->number(c) : 0.0, where_text(*a, c),
                                                     a->text(c)};
      if (std::find(v.begin(), v.end(), e) == v.end()) v.push_back(std::move(e));
    }
  std::sort(v.begin(), v.end());
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& [n, where, text] : v) out.emplace_back(std::move(where), std::move(text));
  return out;
}

}  // namespace attn::plot
