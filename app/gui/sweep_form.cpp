// SweepForm <-> overrides, command line, preset hints, preset TOML and the settings JSON.
#include "app/gui/sweep_form.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "app/cli/run_flags.hpp"
#include "profiling/sweep/axis_parse.hpp"
#include "profiling/sweep/preset.hpp"
#include "profiling/sweep/varlen_axis.hpp"

namespace attn::gui {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ",") {
  std::string s;
  for (const std::string& x : v) {
    if (!s.empty()) s += sep;
    s += x;
  }
  return s;
}

// The text of one axis in one group; empty when the group leaves it at its default.
std::string group_field_text(const SweepGroup& g, const std::string& key) {
  const auto ints = format_int_axis;
  if (key == "batch") return ints(g.batch);
  if (key == "tokens") return g.tokens ? std::to_string(*g.tokens) : "";
  if (key == "heads") return ints(g.heads);
  if (key == "hidden") return g.hidden ? std::to_string(*g.hidden) : "";
  if (key == "heads_kv") return ints(g.heads_kv);
  if (key == "seq_q") return ints(g.seq_q);
  if (key == "seq_kv") return ints(g.seq_kv);
  if (key == "head_dim") return ints(g.head_dim);
  if (key == "head_dim_v") return ints(g.head_dim_v);
  if (key == "dtype") return format_dtype_axis(g.dtype);
  if (key == "causal") return format_bool_axis(g.causal);
  if (key == "window") return format_window_axis(g.window);
  if (key == "compress") return format_compress_axis(g.compress);
  if (key == "select") return format_select_axis(g.select);
  if (key == "varlen") return format_varlen_axis(g.varlen);
  if (key == "pass") return format_pass_axis(g.pass);
  return "";
}

std::string protocol_field_text(const Protocol& p, const std::string& key) {
  if (key == "warmup_ms") return fmt::format("{}", p.warmup_ms);
  if (key == "cooldown_ms") return fmt::format("{}", p.cooldown_ms);
  if (key == "min_samples") return std::to_string(p.min_samples);
  if (key == "max_samples") return std::to_string(p.max_samples);
  if (key == "max_time_s") return fmt::format("{}", p.max_time_s);
  if (key == "noise") return fmt::format("{}", p.noise_pct);
  if (key == "l2") return std::string(to_string(p.l2));
  if (key == "seed") return std::to_string(p.seed);
  if (key == "metrics") return p.metrics;
  if (key == "metrics_replay") return std::string(to_string(p.metrics_replay));
  return "";
}

}  // namespace

const std::vector<FormField>& axis_fields() {
  static const std::vector<FormField> f{
      {"batch", "batch B", "--batch", &SweepForm::batch, &SweepOverrides::batch,
       "batch sizes; replaces tokens"},
      {"tokens", "tokens", "--tokens", &SweepForm::tokens, &SweepOverrides::tokens,
       "B = tokens / seq_q; replaces batch"},
      {"heads", "heads Hq", "--heads", &SweepForm::heads, &SweepOverrides::heads,
       "query heads; replaces hidden"},
      {"hidden", "hidden", "--hidden", &SweepForm::hidden, &SweepOverrides::hidden, "Hq = hidden / head_dim"},
      {"heads_kv", "KV heads", "--heads-kv", &SweepForm::heads_kv, &SweepOverrides::heads_kv,
       "key/value heads (GQA/MQA below Hq; default Hq)"},
      {"seq", "seq S", "--seq", &SweepForm::seq, &SweepOverrides::seq, "square problems: Sq = Sk"},
      {"seq_q", "seq Sq", "--seq-q", &SweepForm::seq_q, &SweepOverrides::seq_q, "query lengths"},
      {"seq_kv", "seq Sk", "--seq-kv", &SweepForm::seq_kv, &SweepOverrides::seq_kv,
       "key/value lengths (default Sq)"},
      {"head_dim", "head dim D", "--head-dim", &SweepForm::head_dim, &SweepOverrides::head_dim,
       "Q/K head dimension"},
      {"head_dim_v", "head dim Dv", "--head-dim-v", &SweepForm::head_dim_v, &SweepOverrides::head_dim_v,
       "V/O head dimension (default D)"},
      {"dtype", "dtype", "--dtype", &SweepForm::dtype, &SweepOverrides::dtype, "fp16,bf16,fp32"},
      {"causal", "causal", "--causal", &SweepForm::causal, &SweepOverrides::causal, "0, 1 or 0,1"},
      {"window", "window", "--window", &SweepForm::window, &SweepOverrides::window,
       "L,R keys left/right of the diagonal; L alone = L,0; several with ';'; none"},
      {"compress", "NSA compressed", "--compress", &SweepForm::compress, &SweepOverrides::compress,
       "l,d: keys are blocks of l positions at stride d (Sk defaults to their count); several with ';'; "
       "none"},
      {"select", "NSA selected", "--select", &SweepForm::select, &SweepOverrides::select,
       "l',n[,seed]: each query block of l' rows sees n causal key blocks of l' (diagonal, block 0, n-2 "
       "drawn); "
       "several with ';'; none"},
      {"varlen", "varlen", "--varlen", &SweepForm::varlen, &SweepOverrides::varlen,
       "variable-length batch up to seq: uniform[:LO], lognormal:MEAN:SIGMA, list:.., file:PATH [@SEED]; "
       "none"},
      {"pass", "pass", "--pass", &SweepForm::pass, &SweepOverrides::pass,
       "fwd, bwd (given the kernel's own forward) or fwd+bwd; several with ','"},
  };
  return f;
}

const std::vector<FormField>& protocol_form_fields() {
  static const std::vector<FormField> f{
      {"warmup_ms", "warm-up [ms]", "--warmup-ms", &SweepForm::warmup_ms, &SweepOverrides::warmup_ms,
       "back-to-back launches before sampling"},
      {"cooldown_ms", "cool-down [ms]", "--cooldown-ms", &SweepForm::cooldown_ms,
       &SweepOverrides::cooldown_ms,
       "GPU idle before each case, so a power-capped clock does not carry over"},
      {"min_samples", "min samples", "--min-samples", &SweepForm::min_samples, &SweepOverrides::min_samples,
       "never stop before this many"},
      {"max_samples", "max samples", "--max-samples", &SweepForm::max_samples, &SweepOverrides::max_samples,
       "hard cap per case"},
      {"max_time_s", "budget [s]", "--max-time-s", &SweepForm::max_time_s, &SweepOverrides::max_time_s,
       "sampling time per case"},
      {"noise", "noise [%]", "--noise", &SweepForm::noise, &SweepOverrides::noise,
       "stop when the median's relative standard error is below this"},
      {"l2", "L2", "--l2", &SweepForm::l2, &SweepOverrides::l2, "cold: flush before every sample; warm"},
      {"seed", "seed", "--seed", &SweepForm::seed, &SweepOverrides::seed, "input generator seed"},
      {"metrics", "metrics", "--metrics", &SweepForm::metrics, &SweepOverrides::metrics,
       "CUPTI pass: default, none, +NAME,.. or NAME,.."},
      {"metrics_replay", "replay", "--metrics-replay", &SweepForm::metrics_replay,
       &SweepOverrides::metrics_replay,
       "metrics pass: case reruns the case per pass; kernel: CUPTI saves/restores (as ncu); auto"},
  };
  return f;
}

SweepOverrides to_overrides(const SweepForm& form) {
  SweepOverrides o;
  if (!form.preset.empty()) o.preset = form.preset;
  if (!form.kernels.empty()) o.kernels = join(form.kernels);
  if (!form.baseline.empty()) o.baseline = form.baseline;
  if (form.backend == "cpu" || form.backend == "cuda") o.backend = form.backend;
  for (const auto* fields : {&axis_fields(), &protocol_form_fields()})
    for (const FormField& f : *fields)
      if (!(form.*f.text).empty()) o.*f.target = form.*f.text;
  if (!form.graphs.empty()) o.graphs = form.graphs;
  if (form.no_check == "1") o.no_check = "1";
  if (!form.out.empty()) o.out = form.out;
  return o;
}

SweepSpec form_spec(const SweepForm& form, const std::string& presets_dir) {
  return spec_from_overrides(to_overrides(form), presets_dir, "");
}

std::vector<std::string> worker_commands(const SweepForm& form) {
  std::vector<std::string> cmds;
  std::size_t start = 0;
  while (start <= form.workers.size()) {
    std::size_t end = form.workers.find('\n', start);
    if (end == std::string::npos) end = form.workers.size();
    std::string line = form.workers.substr(start, end - start);
    const auto first = line.find_first_not_of(" \t\r");
    const auto last = line.find_last_not_of(" \t\r");
    line = first == std::string::npos ? std::string() : line.substr(first, last - first + 1);
    if (line == "local")
      cmds.emplace_back();
    else if (!line.empty())
      cmds.push_back(line);
    start = end + 1;
  }
  // Only local workers: the default, which the command line leaves out.
  if (std::all_of(cmds.begin(), cmds.end(), [](const std::string& c) { return c.empty(); }) &&
      cmds.size() <= 1)
    cmds.clear();
  return cmds;
}

cli::RunOptions to_run_options(const SweepForm& form) {
  cli::RunOptions o;
  o.sweep = to_overrides(form);
  o.isolation.worker_cmds = worker_commands(form);
  if (!form.devices.empty()) o.isolation.devices = form.devices;
  if (!form.shard.empty()) o.isolation.shard = form.shard;
  return o;
}

std::string command_line(const SweepForm& form) {
  return cli::run_command_line("attnscope", to_run_options(form));
}

std::string spec_field_text(const SweepSpec& spec, const std::string& key) {
  for (const FormField& f : protocol_form_fields())
    if (key == f.key) return protocol_field_text(spec.protocol, key);
  std::vector<std::string> per_group;
  std::set<std::string> seen;
  for (const SweepGroup& g : spec.groups) {
    std::string t = key == "seq" ? group_field_text(g, "seq_q") : group_field_text(g, key);
    if (key == "seq" && !g.seq_kv.empty()) t.clear();   // not square
    if (key == "seq_q" && g.seq_kv.empty()) t.clear();  // square: shown under seq
    if (t.empty() || !seen.insert(t).second) continue;
    per_group.push_back(t);
  }
  return join(per_group, " | ");
}

nlohmann::json form_to_json(const SweepForm& form) {
  nlohmann::json j;
  j["preset"] = form.preset;
  j["kernels"] = form.kernels;
  j["baseline"] = form.baseline;
  j["backend"] = form.backend;
  for (const auto* fields : {&axis_fields(), &protocol_form_fields()})
    for (const FormField& f : *fields) j[f.key] = form.*f.text;
  j["graphs"] = form.graphs;
  j["no_check"] = form.no_check;
  j["out"] = form.out;
  j["workers"] = form.workers;
  j["devices"] = form.devices;
  j["shard"] = form.shard;
  return j;
}

SweepForm form_from_json(const nlohmann::json& j) {
  SweepForm form;
  if (!j.is_object()) return form;
  auto str = [&](const char* key, std::string& slot) {
    if (const auto it = j.find(key); it != j.end() && it->is_string()) slot = it->get<std::string>();
  };
  str("preset", form.preset);
  str("baseline", form.baseline);
  str("backend", form.backend);
  if (form.backend != "cpu" && form.backend != "cuda") form.backend = "auto";
  if (const auto it = j.find("kernels"); it != j.end() && it->is_array())
    for (const auto& k : *it)
      if (k.is_string()) form.kernels.push_back(k.get<std::string>());
  for (const auto* fields : {&axis_fields(), &protocol_form_fields()})
    for (const FormField& f : *fields) str(f.key, form.*f.text);
  str("graphs", form.graphs);
  str("no_check", form.no_check);
  str("out", form.out);
  str("workers", form.workers);
  str("devices", form.devices);
  str("shard", form.shard);
  return form;
}

}  // namespace attn::gui
