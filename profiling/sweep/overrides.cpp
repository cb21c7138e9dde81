// Applies CLI/GUI overrides to a SweepSpec (see overrides.hpp).
#include "profiling/sweep/overrides.hpp"

#include <algorithm>

#include "kernels/registry.hpp"
#include "profiling/sweep/axis_parse.hpp"
#include "profiling/sweep/preset.hpp"
#include "profiling/sweep/protocol_fields.hpp"
#include "profiling/sweep/variant.hpp"
#include "profiling/sweep/varlen_axis.hpp"

namespace attn {

namespace {

std::string registered_ids() {
  std::string list;
  for (const auto& k : kernel_registry()) list += (list.empty() ? "" : ", ") + k.id;
  return list;
}

// Comma-separated kernel variants, each checked against the registry (kernel, knob names, knob
// values); two entries naming the same kernel and knobs are an error.
std::vector<std::string> parse_kernel_list(const std::string& text) {
  const std::string expected = "registered kernel ids separated by commas, from: " + registered_ids() +
                               "; ID@knob=value+knob=value sets knobs";
  std::vector<std::string> ids;
  std::vector<ResolvedVariant> resolved;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string id = text.substr(start, end - start);
    id.erase(0, id.find_first_not_of(" \t"));
    id.erase(id.find_last_not_of(" \t") + 1);
    if (id.empty())
      throw SpecError(format_field_error("--kernels", text, {"empty kernel id in the list", expected}));
    AxisProblem problem;
    const auto v = try_resolve_kernel_variant(id, problem);
    if (!v) {
      // An unknown id lists the registered ones; a knob or syntax problem says what that kernel allows.
      const bool unknown = problem.what.rfind("unknown kernel", 0) == 0;
      throw SpecError(format_field_error(
          "--kernels", text,
          {unknown ? problem.what : "'" + id + "': " + problem.what, unknown ? expected : problem.allowed}));
    }
    for (std::size_t i = 0; i < resolved.size(); ++i)
      if (resolved[i].spec == v->spec && resolved[i].knobs == v->knobs)
        throw SpecError(
            format_field_error("--kernels", text,
                               {"'" + ids[i] + "' and '" + id + "' are the same variant (" + v->label + ")",
                                "each variant once"}));
    ids.push_back(id);
    resolved.push_back(*v);
    start = end + 1;
  }
  return ids;
}

// Whether `kernels` holds `variant` (same_variant: knob settings in any order, defaults spelt out
// or not).
bool lists_variant(const std::vector<std::string>& kernels, const std::string& variant) {
  return std::any_of(kernels.begin(), kernels.end(),
                     [&](const std::string& k) { return same_variant(k, variant); });
}

template <class T, class F>
void set_axis(SweepSpec& spec, const std::optional<std::string>& text, const char* flag, F parse,
              std::vector<T> SweepGroup::*axis) {
  if (!text) return;
  const std::vector<T> values = parse(*text, flag);
  for (auto& g : spec.groups) g.*axis = values;
}

}  // namespace

void apply_overrides(SweepSpec& spec, const SweepOverrides& o) {
  if (o.batch && o.tokens)
    throw SpecError("--batch and --tokens set the same axis (batch = tokens / seq); give one");
  if (o.heads && o.hidden)
    throw SpecError("--heads and --hidden set the same axis (heads = hidden / head_dim); give one");
  if (o.seq && o.seq_q) throw SpecError("--seq and --seq-q set the same axis; give one");
  if (o.any_axis() && spec.groups.empty()) spec.groups.emplace_back();

  set_axis(spec, o.batch, "--batch", parse_int_axis, &SweepGroup::batch);
  set_axis(spec, o.heads, "--heads", parse_int_axis, &SweepGroup::heads);
  set_axis(spec, o.heads_kv, "--heads-kv", parse_int_axis, &SweepGroup::heads_kv);
  set_axis(spec, o.seq, "--seq", parse_int_axis, &SweepGroup::seq_q);
  set_axis(spec, o.seq_q, "--seq-q", parse_int_axis, &SweepGroup::seq_q);
  set_axis(spec, o.seq_kv, "--seq-kv", parse_int_axis, &SweepGroup::seq_kv);
  set_axis(spec, o.head_dim, "--head-dim", parse_int_axis, &SweepGroup::head_dim);
  set_axis(spec, o.head_dim_v, "--head-dim-v", parse_int_axis, &SweepGroup::head_dim_v);
  set_axis(spec, o.dtype, "--dtype", parse_dtype_axis, &SweepGroup::dtype);
  set_axis(spec, o.causal, "--causal", parse_bool_axis, &SweepGroup::causal);
  set_axis(spec, o.window, "--window", parse_window_axis, &SweepGroup::window);
  set_axis(spec, o.compress, "--compress", parse_compress_axis, &SweepGroup::compress);
  set_axis(spec, o.select, "--select", parse_select_axis, &SweepGroup::select);
  set_axis(spec, o.varlen, "--varlen", parse_varlen_axis, &SweepGroup::varlen);
  set_axis(spec, o.pass, "--pass", parse_pass_axis, &SweepGroup::pass);
  if (o.seq && !o.seq_kv)
    for (auto& g : spec.groups) g.seq_kv.clear();  // square: seq_kv defaults to seq_q
  if (o.batch)
    for (auto& g : spec.groups) g.tokens.reset();
  if (o.heads)
    for (auto& g : spec.groups) g.hidden.reset();
  if (o.tokens) {
    const std::int64_t t = parse_int_value(*o.tokens, "--tokens", 1);
    for (auto& g : spec.groups) g.tokens = t, g.batch.clear();
  }
  if (o.hidden) {
    const std::int64_t h = parse_int_value(*o.hidden, "--hidden", 1);
    for (auto& g : spec.groups) g.hidden = h, g.heads.clear();
  }

  if (o.kernels) {
    spec.kernels = parse_kernel_list(*o.kernels);
    spec.kernel_where.clear();  // the preset's lines no longer name these kernels
    // A preset's baseline that the new list drops no longer applies.
    if (!lists_variant(spec.kernels, spec.baseline)) spec.baseline.clear();
  }
  if (o.baseline) {
    if (!lists_variant(spec.kernels, *o.baseline)) {
      std::string list;
      for (const auto& k : spec.kernels) list += (list.empty() ? "" : ", ") + k;
      throw SpecError(
          format_field_error("--baseline", *o.baseline,
                             {"not one of the kernels of this run", list.empty() ? "(no kernels)" : list}));
    }
    spec.baseline = *o.baseline;
  }
  if (o.backend) {
    const auto b = parse_backend(*o.backend);
    if (!b) throw SpecError(format_field_error("--backend", *o.backend, {"unknown backend", "cpu or cuda"}));
    spec.backend = *b;
  }
  if (o.out) {
    if (o.out->empty()) throw SpecError(format_field_error("--out", *o.out, {"empty path", "a directory"}));
    spec.out_dir = *o.out;
  }
  if (o.force) spec.force = parse_bool_value(*o.force, "--force");

  const std::pair<const std::optional<std::string>*, const char*> protocol_flags[] = {
      {&o.warmup_ms, "warmup_ms"},
      {&o.cooldown_ms, "cooldown_ms"},
      {&o.min_samples, "min_samples"},
      {&o.max_samples, "max_samples"},
      {&o.max_time_s, "max_time_s"},
      {&o.noise, "noise_pct"},
      {&o.l2, "l2"},
      {&o.graphs, "graphs"},
      {&o.graph_batch, "graph_batch"},
      {&o.seed, "seed"},
      {&o.metrics, "metrics"},
      {&o.metrics_replay, "metrics_replay"},
  };
  for (const auto& [text, key] : protocol_flags) {
    if (!*text) continue;
    AxisProblem problem;
    if (!try_set_protocol_field(spec.protocol, key, **text, problem))
      throw SpecError(format_field_error(find_protocol_field(key)->flag, **text, problem));
  }
  if (o.no_check) spec.protocol.check = !parse_bool_value(*o.no_check, "--no-check");
  if (const std::string c = protocol_consistency_problem(spec.protocol); !c.empty())
    throw SpecError("--min-samples/--max-samples: " + c + " (after applying the preset's [protocol])");
}

SweepSpec spec_from_overrides(const SweepOverrides& o, const std::filesystem::path& presets_dir,
                              std::string_view default_preset) {
  SweepSpec spec;
  const std::string name = o.preset ? *o.preset : std::string(default_preset);
  if (!name.empty()) {
    spec = load_preset(resolve_preset(name, presets_dir));
  } else {
    spec.source = "command line";
    spec.name = "command-line";
    spec.shapes_from_flags = true;
  }
  apply_overrides(spec, o);
  return spec;
}

}  // namespace attn
