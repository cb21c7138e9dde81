// Command-line (or GUI form) overrides of a sweep: raw flag text, applied over a preset.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "profiling/sweep/sweep_spec.hpp"

namespace attn {

// One member per flag of add_sweep_flags (app/cli/sweep_flags.hpp), holding the text as typed;
// nullopt = flag not given. Boolean flags hold "1"/"0".
struct SweepOverrides {
  std::optional<std::string> preset;   // --preset NAME|FILE (read by spec_from_overrides)
  std::optional<std::string> kernels;  // --kernels a,b
  std::optional<std::string> batch, tokens, heads, hidden, heads_kv;
  std::optional<std::string> seq, seq_q, seq_kv, head_dim, head_dim_v;
  std::optional<std::string> dtype, causal, window, compress, select, varlen, pass;
  std::optional<std::string> backend, baseline, out, force;
  // Protocol (profiling/protocol.hpp).
  std::optional<std::string> warmup_ms, cooldown_ms, min_samples, max_samples, max_time_s, noise, l2, graphs,
      graph_batch, metrics_replay, seed, no_check, metrics;

  bool any_axis() const {
    return batch || tokens || heads || hidden || heads_kv || seq || seq_q || seq_kv || head_dim ||
           head_dim_v || dtype || causal || window || compress || select || varlen || pass;
  }
};

// Applies every given flag; an axis flag replaces that axis in every group (a spec with no group
// gets one). --seq sets seq_q and resets seq_kv to its default (= seq_q: square problems);
// --batch clears `tokens` and --tokens clears batch; --heads clears `hidden` and --hidden clears
// heads. --kernels holds kernel variants (profiling/sweep/variant.hpp: ID or ID@knob=value+...),
// each checked against the registry (kernel, knob names, knob values) and none listed twice; a
// preset baseline that --kernels drops is cleared; --baseline must be one of the variants (knob
// order and spelt-out defaults do not matter). Errors throw SpecError naming the flag:
//   --head-dim '64,abc': 'abc' is not an integer; expected a list like 64,128 or ...
void apply_overrides(SweepSpec& spec, const SweepOverrides& o);

// The whole spec for `run`: the preset named by --preset (else `default_preset`, resolved in
// presets_dir; none when empty) with the overrides applied. Without any preset the spec starts
// empty with source "command line".
SweepSpec spec_from_overrides(const SweepOverrides& o, const std::filesystem::path& presets_dir,
                              std::string_view default_preset);

}  // namespace attn
