// find_crossovers(): grouping by the other axes, the derived-axis conventions, the threshold scan
// from the largest swept value down, and the TOML/text forms.
#include "reports/crossover.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "reports/case_query.hpp"
#include "reports/text_format.hpp"

namespace attn {

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

std::int64_t axis_value(const Problem& p, CrossAxis a) {
  switch (a) {
    case CrossAxis::seq:
    case CrossAxis::seq_q:
      return p.seq_q;
    case CrossAxis::seq_kv:
      return p.seq_kv;
    case CrossAxis::head_dim:
      return p.head_dim;
    case CrossAxis::head_dim_v:
      return p.head_dim_v;
    case CrossAxis::batch:
      return p.batch;
    case CrossAxis::heads:
      return p.heads_q;
    case CrossAxis::heads_kv:
      return p.heads_kv;
    case CrossAxis::window:
      return p.window.left;
  }
  return 0;
}

std::string num(std::int64_t v) { return std::to_string(v); }

Fields group_fields(const Problem& p, CrossAxis a, bool tokens, bool hidden) {
  Fields f;
  f.emplace_back("dtype", fmt::format("\"{}\"", to_string(p.dtype)));
  f.emplace_back("causal", p.causal ? "true" : "false");
  if (a == CrossAxis::window)
    f.emplace_back("window_right", num(p.window.right));
  else
    f.emplace_back("window", fmt::format("[{}, {}]", p.window.left, p.window.right));
  f.emplace_back("compress", fmt::format("[{}, {}]", p.compress.block, p.compress.stride));
  f.emplace_back("select", fmt::format("[{}, {}, {}]", p.select.block, p.select.count, p.select.seed));
  f.emplace_back("pass", fmt::format("\"{}\"", to_string(p.pass)));  // shown only where it varies
  if (a != CrossAxis::batch) {
    if (tokens)
      f.emplace_back("tokens", num(p.batch * p.seq_q));
    else
      f.emplace_back("batch", num(p.batch));
  }
  if (a != CrossAxis::heads) {
    if (hidden)
      f.emplace_back("hidden", num(p.heads_q * p.head_dim));
    else
      f.emplace_back("heads", num(p.heads_q));
  }
  if (a != CrossAxis::heads_kv) f.emplace_back("kv_group", num(p.heads_kv > 0 ? p.heads_q / p.heads_kv : 0));
  // A compressed branch's Sk is its block count at Sq: along one of them the other is not a group.
  const bool derived_kv = p.compress.active() && p.seq_kv == p.compress.blocks_at(p.seq_q - 1);
  if (a == CrossAxis::seq_kv && derived_kv)
    f.emplace_back("seq_q", "\"derived\"");
  else if (a != CrossAxis::seq && a != CrossAxis::seq_q)
    f.emplace_back("seq_q", num(p.seq_q));
  if (a == CrossAxis::seq && derived_kv)
    f.emplace_back("seq_kv", "\"derived\"");
  else if (a == CrossAxis::seq)
    f.emplace_back("seq_kv", p.seq_kv == p.seq_q ? std::string("\"tied\"") : num(p.seq_kv));
  else if (a != CrossAxis::seq_kv)
    f.emplace_back("seq_kv", num(p.seq_kv));
  if (a != CrossAxis::head_dim) f.emplace_back("head_dim", num(p.head_dim));
  if (a == CrossAxis::head_dim)
    f.emplace_back("head_dim_v", p.head_dim_v == p.head_dim ? std::string("\"tied\"") : num(p.head_dim_v));
  else if (a != CrossAxis::head_dim_v)
    f.emplace_back("head_dim_v", num(p.head_dim_v));
  return f;
}

std::string fields_key(const Fields& f) {
  std::string k;
  for (const auto& [name, value] : f) k += name + "=" + value + ";";
  return k;
}

template <class F>
std::size_t distinct(const std::vector<const CaseResult*>& cases, F&& f) {
  std::set<std::int64_t> s;
  for (const CaseResult* c : cases) s.insert(f(c->problem));
  return s.size();
}

struct Acc {
  Fields fields;
  Problem first;                              // the group's first problem: its dtype and mask name the group
  std::map<std::int64_t, double> a_ms, b_ms;  // axis value -> fastest ok median
};

void keep_fastest(std::map<std::int64_t, double>& m, std::int64_t v, double ms) {
  const auto it = m.find(v);
  if (it == m.end() || ms < it->second) m[v] = ms;
}

std::string plain(const std::string& toml_value) {
  if (toml_value.size() >= 2 && toml_value.front() == '"') return toml_value.substr(1, toml_value.size() - 2);
  return toml_value;
}

}  // namespace

std::string_view to_string(CrossAxis a) {
  switch (a) {
    case CrossAxis::seq:
      return "seq";
    case CrossAxis::seq_q:
      return "seq_q";
    case CrossAxis::seq_kv:
      return "seq_kv";
    case CrossAxis::head_dim:
      return "head_dim";
    case CrossAxis::head_dim_v:
      return "head_dim_v";
    case CrossAxis::batch:
      return "batch";
    case CrossAxis::heads:
      return "heads";
    case CrossAxis::heads_kv:
      return "heads_kv";
    case CrossAxis::window:
      return "window";
  }
  return "?";
}

std::optional<CrossAxis> parse_cross_axis(std::string_view s) {
  for (const CrossAxis a :
       {CrossAxis::seq, CrossAxis::seq_q, CrossAxis::seq_kv, CrossAxis::head_dim, CrossAxis::head_dim_v,
        CrossAxis::batch, CrossAxis::heads, CrossAxis::heads_kv, CrossAxis::window})
    if (s == to_string(a)) return a;
  return std::nullopt;
}

std::string CrossoverResult::key() const {
  return options.key.empty() ? "min_" + std::string(to_string(options.axis)) : options.key;
}

CrossoverResult find_crossovers(const std::vector<CaseResult>& cases, const CrossoverOptions& options) {
  if (options.a == options.b)
    throw std::invalid_argument("--a and --b name the same kernel '" + options.a + "'; give two kernels");
  if (!(options.headroom > 0) || !std::isfinite(options.headroom))
    throw std::invalid_argument(
        fmt::format("--headroom {}: must be a number > 0 (1.1 = A at least 10% faster)", options.headroom));
  std::vector<const CaseResult*> usable;
  std::set<std::string> measured;
  for (const CaseResult& c : cases) {
    if (!is_measured(c)) continue;
    const std::string& k = variant_label(c);
    measured.insert(k);
    if (options.axis == CrossAxis::window && c.problem.window.left < 0) continue;  // no window length
    if (!c.problem.mask_label().starts_with(options.mask)) continue;
    if (k == options.a || k == options.b) usable.push_back(&c);
  }
  if (usable.empty() && !options.mask.empty())
    throw std::invalid_argument(
        "--mask '" + options.mask + "': no case of " + options.a + " or " + options.b +
        " has a mask starting so (masks are named like full, causal, causal+win128,0, "
        "cmp32,16)");
  for (const std::string* k : {&options.a, &options.b}) {
    if (measured.contains(*k)) continue;
    std::string list;
    for (const auto& m : measured) list += (list.empty() ? "" : ", ") + m;
    throw std::invalid_argument("kernel '" + *k + "' has no ok case in the results; kernels with ok cases: " +
                                (list.empty() ? std::string("none") : list));
  }

  CrossoverResult r;
  r.options = options;
  const CrossAxis axis = options.axis;
  if (axis == CrossAxis::seq || axis == CrossAxis::seq_q)
    r.tokens_convention = distinct(usable, [](const Problem& p) { return p.batch * p.seq_q; }) <
                          distinct(
                              usable, [](const Problem& p) { return p.batch; });
  if (axis == CrossAxis::head_dim)
    r.hidden_convention = distinct(usable, [](const Problem& p) { return p.heads_q * p.head_dim; }) <
                          distinct(
                              usable, [](const Problem& p) { return p.heads_q; });

  std::vector<Acc> groups;
  std::map<std::string, std::size_t> index;
  for (const CaseResult* c : usable) {
    Fields f = group_fields(c->problem, axis, r.tokens_convention, r.hidden_convention);
    const std::string k = fields_key(f);
    auto it = index.find(k);
    if (it == index.end()) {
      it = index.emplace(k, groups.size()).first;
      groups.push_back({std::move(f), c->problem, {}, {}});
    }
    Acc& g = groups[it->second];
    keep_fastest(variant_label(*c) == options.a ? g.a_ms : g.b_ms, axis_value(c->problem, axis),
                 c->timing->median_ms);
  }

  // Fields that differ between groups name them; dtype and the mask always do.
  std::set<std::string> varying;
  for (std::size_t i = 1; i < groups.size(); ++i)
    for (std::size_t f = 0; f < groups[i].fields.size(); ++f)
      if (groups[i].fields[f] != groups[0].fields[f]) varying.insert(groups[i].fields[f].first);

  for (const Acc& g : groups) {
    CrossoverGroup out;
    out.label = std::string(to_string(g.first.dtype)) + " " + g.first.mask_label();
    if (axis == CrossAxis::window)  // the window's length is the axis, not the group's name
      out.label = fmt::format("{} {}win(w),{}", to_string(g.first.dtype), g.first.causal ? "causal+" : "",
                              g.first.window.right);
    for (const auto& field : g.fields) {
      if (!varying.contains(field.first)) continue;
      out.fields.push_back(field);
      if (field.first != "dtype" && field.first != "causal" && field.first != "window" &&
          field.first != "compress" && field.first != "select" && field.first != "window_right")
        out.label += " " + field.first + "=" + plain(field.second);
    }
    std::set<std::int64_t> values;
    for (const auto& [v, ms] : g.a_ms) values.insert(v);
    for (const auto& [v, ms] : g.b_ms) values.insert(v);
    for (const std::int64_t v : values) {
      const auto a = g.a_ms.find(v);
      const auto b = g.b_ms.find(v);
      if (a == g.a_ms.end() || b == g.b_ms.end()) {
        ++out.unpaired;
        continue;
      }
      out.points.push_back({v, a->second, b->second, b->second / a->second});
    }
    // From the largest value down: the threshold is the last value of the unbroken winning run.
    for (auto it = out.points.rbegin(); it != out.points.rend() && it->speedup >= options.headroom; ++it)
      out.threshold = it->value;
    r.groups.push_back(std::move(out));
  }
  return r;
}

std::string crossover_toml(const CrossoverResult& r, const std::string& source) {
  const std::string axis(to_string(r.options.axis));
  const std::string key = r.key();
  std::string out = fmt::format(
      "# attnscope crossover: {0} is the smallest {1} from which {2} is at least {3:.4g}x faster than {4}\n"
      "# (median {4} / median {2}) at every larger swept {1}, per group of the other axes.\n",
      key, axis, r.options.a, r.options.headroom, r.options.b);
  if (r.tokens_convention) out += "# batch follows tokens = batch x seq_q in these results.\n";
  if (r.hidden_convention) out += "# heads follow hidden = heads x head_dim in these results.\n";
  out += fmt::format("# source: {}\n[crossover]\na = \"{}\"\nb = \"{}\"\naxis = \"{}\"\nheadroom = {}\n",
                     source, r.options.a, r.options.b, axis, r.options.headroom);
  if (r.groups.size() == 1) {
    const CrossoverGroup& g = r.groups.front();
    out += fmt::format("found = {}\n", g.threshold ? "true" : "false");
    if (g.threshold) {
      const auto p = std::find_if(g.points.begin(), g.points.end(),
                                  [&](const CrossoverPoint& x) { return x.value == *g.threshold; });
      out += fmt::format("{} = {}\nspeedup = {:.3f}\n", key, *g.threshold, p->speedup);
    }
    return out;
  }
  for (const CrossoverGroup& g : r.groups) {
    out += fmt::format("\n[[crossover.group]]  # {}\n", g.label);
    for (const auto& [name, value] : g.fields) out += name + " = " + value + "\n";
    out += fmt::format("found = {}\n", g.threshold ? "true" : "false");
    if (g.threshold) {
      const auto p = std::find_if(g.points.begin(), g.points.end(),
                                  [&](const CrossoverPoint& x) { return x.value == *g.threshold; });
      out += fmt::format("{} = {}\nspeedup = {:.3f}\n", key, *g.threshold, p->speedup);
    }
  }
  return out;
}

std::string crossover_text(const CrossoverResult& r) {
  const std::string axis(to_string(r.options.axis));
  std::string out =
      fmt::format("crossover of {} over {} along {} (headroom {:.4g}x): {} group{}\n", r.options.a,
                  r.options.b, axis, r.options.headroom, r.groups.size(), r.groups.size() == 1 ? "" : "s");
  for (const CrossoverGroup& g : r.groups) {
    out += fmt::format("\n{}: ", g.label);
    if (g.threshold)
      out += fmt::format("{} >= {}\n", axis, *g.threshold);
    else
      out += g.points.empty() ? "no value where both kernels are ok\n"
                              : fmt::format("none ({} is not {:.4g}x faster at the largest {})\n",
                                            r.options.a, r.options.headroom, axis);
    for (const CrossoverPoint& p : g.points)
      out += fmt::format("  {}={:<8} {} {}  {} {}  speedup {:.3f}{}\n", axis, p.value, r.options.a,
                         format_duration_ms(p.a_ms), r.options.b, format_duration_ms(p.b_ms), p.speedup,
                         g.threshold && p.value >= *g.threshold ? "  *" : "");
    if (g.unpaired > 0)
      out += fmt::format("  ({} value{} with only one of the two kernels ok)\n", g.unpaired,
                         g.unpaired == 1 ? "" : "s");
  }
  return out;
}

std::string crossover_markdown(const CrossoverResult& r, const std::string& source) {
  const std::string axis(to_string(r.options.axis));
  std::string out = fmt::format("## Thresholds: {} over {} along {}\n\n", r.options.a, r.options.b, axis);
  out += fmt::format(
      "The threshold `{}` is the smallest {} from which {} is at least {:.4g}x faster than {} (median {} / "
      "median {}) at every larger swept value. Source: {}.\n",
      r.key(), axis, r.options.a, r.options.headroom, r.options.b, r.options.b, r.options.a, source);
  for (const CrossoverGroup& g : r.groups) {
    out += fmt::format("\n### {}\n\n", g.label);
    out += g.threshold ? fmt::format("Chosen: **{} = {}**.\n\n", r.key(), *g.threshold)
                       : fmt::format("Chosen: none: {} does not clear {:.4g}x up to the largest {}.\n\n",
                                     r.options.a, r.options.headroom, axis);
    out += fmt::format("| {} | {} | {} | speedup | >= {:.4g}x |\n| ---: | ---: | ---: | ---: | :---: |\n",
                       axis, r.options.a, r.options.b, r.options.headroom);
    for (const CrossoverPoint& p : g.points)
      out +=
          fmt::format("| {} | {} | {} | {:.3f} | {} |\n", p.value, format_duration_ms(p.a_ms),
                      format_duration_ms(p.b_ms), p.speedup, p.speedup >= r.options.headroom ? "yes" : "no");
  }
  out += "\n```toml\n" + crossover_toml(r, source) + "```\n";
  return out;
}

}  // namespace attn
