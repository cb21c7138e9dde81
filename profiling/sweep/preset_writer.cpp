// Presets written as TOML (the GUI's "Save preset"): the inverse of parse_preset, next to it so a
// new preset key is added to both at once (tests/profiling/test_preset.cpp reads every written
// preset back).
#include <fmt/format.h>

#include "kernels/api/python_entry.hpp"
#include "profiling/sweep/axis_text.hpp"
#include "profiling/sweep/preset.hpp"
#include "profiling/sweep/varlen_axis.hpp"

namespace attn {

namespace {

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
  return out;
}

template <class T, class F>
std::string toml_array(const std::vector<T>& v, F f) {
  // Appends rather than "[" + ... + "]": GCC 12 at -O3 flags the latter with a false -Wrestrict.
  std::string out = "[";
  out += join_map(v, f, ", ");
  out += ']';
  return out;
}

void write_group(std::string& out, const SweepGroup& g) {
  auto ints = [](const std::vector<std::int64_t>& v) {
    return toml_array(v, [](std::int64_t x) { return std::to_string(x); });
  };
  auto line = [&](const char* key, const std::string& value) { out += fmt::format("{} = {}\n", key, value); };
  if (g.tokens) line("tokens", std::to_string(*g.tokens));
  if (!g.batch.empty()) line("batch", ints(g.batch));
  if (g.hidden) line("hidden", std::to_string(*g.hidden));
  if (!g.heads.empty()) line("heads", ints(g.heads));
  if (!g.heads_kv.empty()) line("heads_kv", ints(g.heads_kv));
  if (!g.seq_q.empty()) line("seq_q", ints(g.seq_q));
  if (!g.seq_kv.empty()) line("seq_kv", ints(g.seq_kv));
  if (!g.head_dim.empty()) line("head_dim", ints(g.head_dim));
  if (!g.head_dim_v.empty()) line("head_dim_v", ints(g.head_dim_v));
  if (!g.dtype.empty())
    line("dtype", toml_array(g.dtype, [](DType d) { return toml_string(std::string(to_string(d))); }));
  if (!g.causal.empty()) line("causal", toml_array(g.causal, [](int c) { return std::to_string(c); }));
  if (!g.pass.empty())
    line("pass", toml_array(g.pass, [](Pass p) { return toml_string(std::string(to_string(p))); }));
  // Always an array of arrays: one window or several read the same way.
  if (!g.window.empty())
    line("window",
         toml_array(g.window, [](const Window& w) { return fmt::format("[{}, {}]", w.left, w.right); }));
  if (!g.varlen.empty())
    line("varlen", toml_array(g.varlen, [](const VarLenSpec& v) { return toml_string(format_varlen(v)); }));
  // Strings, so that "none" beside a branch reads back as written.
  if (!g.compress.empty())
    line("compress", toml_array(g.compress, [](const Compress& c) {
           return toml_string(c.active() ? fmt::format("{},{}", c.block, c.stride) : std::string("none"));
         }));
  if (!g.select.empty())
    line("select", toml_array(g.select, [](const Select& v) { return toml_string(select_text(v)); }));
}

}  // namespace

std::string preset_toml(const SweepSpec& spec) {
  std::string out = "# Sweep preset written by the attnscope GUI (format: docs/presets.md).\n";
  auto line = [&](const char* key, const std::string& value) { out += fmt::format("{} = {}\n", key, value); };
  if (!spec.name.empty()) line("name", toml_string(spec.name));
  if (!spec.description.empty()) line("description", toml_string(spec.description));
  // Python kernels go back under their own key, in the form it reads ("FILE.py:FUNC=ID" or an id).
  std::vector<std::string> libraries, python;
  for (const std::string& p : spec.plugins) {
    if (const auto e = parse_python_entry(p))
      python.push_back(e->builtin() ? e->id : e->file + ":" + e->function + "=" + e->id);
    else
      libraries.push_back(p);
  }
  if (!libraries.empty()) line("plugins", toml_array(libraries, toml_string));
  if (!python.empty()) line("python_kernels", toml_array(python, toml_string));
  line("kernels", toml_array(spec.kernels, toml_string));
  if (!spec.baseline.empty()) line("baseline", toml_string(spec.baseline));
  if (spec.backend) line("backend", toml_string(std::string(to_string(*spec.backend))));
  out += "\n[sweep]\n";
  if (spec.groups.size() == 1) {
    write_group(out, spec.groups.front());
  } else {
    for (const SweepGroup& g : spec.groups) {
      out += "\n[[group]]\n";
      write_group(out, g);
    }
  }
  const Protocol& p = spec.protocol;
  out += "\n[protocol]\n";
  line("warmup_ms", fmt::format("{}", p.warmup_ms));
  line("cooldown_ms", fmt::format("{}", p.cooldown_ms));
  line("min_samples", std::to_string(p.min_samples));
  line("max_samples", std::to_string(p.max_samples));
  line("max_time_s", fmt::format("{}", p.max_time_s));
  line("noise_pct", fmt::format("{}", p.noise_pct));
  line("l2", toml_string(std::string(to_string(p.l2))));
  line("graphs", p.graphs ? "true" : "false");
  line("graph_batch", std::to_string(p.graph_batch));
  line("seed", std::to_string(p.seed));
  line("check", p.check ? "true" : "false");
  line("metrics", toml_string(p.metrics));
  line("metrics_replay", toml_string(std::string(to_string(p.metrics_replay))));
  return out;
}

}  // namespace attn
