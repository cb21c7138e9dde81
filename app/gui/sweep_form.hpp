// The sweep form of the GUI as data (no ImGui): the text the user typed per field, in the CLI's
// syntax, turned into SweepOverrides (so the GUI and `attnscope run` accept exactly the same
// input), the equivalent command line, hints from the chosen preset, and presets written as TOML.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/commands.hpp"
#include "profiling/sweep/overrides.hpp"
#include "profiling/sweep/sweep_spec.hpp"

namespace attn::gui {

struct SweepForm {
  std::string preset;                // name in the presets folder or a .toml path; empty = none
  std::vector<std::string> kernels;  // explicit choice; empty = the preset's kernels
  std::string baseline;              // empty = the preset's
  std::string backend = "auto";      // auto | cpu | cuda
  // Axes and protocol fields, in flag syntax; empty = the preset's value (or the default).
  std::string batch, tokens, heads, hidden, heads_kv, seq, seq_q, seq_kv, head_dim, head_dim_v, dtype, causal,
      window, compress, select, varlen, pass;
  std::string warmup_ms, cooldown_ms, min_samples, max_samples, max_time_s, noise, l2, seed, metrics,
      metrics_replay;
  std::string graphs;    // "" | "1" | "0"
  std::string no_check;  // "" | "1"
  std::string out;       // results directory; empty = runs/<run-id>
  // Where cases run: worker commands, one per line (`ssh gpu7 attnscope worker`; `local` = this
  // executable); empty = one local worker. Each command x each device is one worker.
  std::string workers;
  std::string devices;  // --devices: "0,1", "all"; empty = device 0
  std::string shard;    // --shard k/n; empty = the whole plan
};

// The worker commands of the form's worker list: blank lines dropped, `local` as "" (this
// executable), in order.
std::vector<std::string> worker_commands(const SweepForm& form);

// One text field of the form, the flag it stands for and where it goes in SweepOverrides.
struct FormField {
  const char* key;    // "head_dim": JSON key of the settings file
  const char* label;  // "head dim D"
  const char* flag;   // "--head-dim"
  std::string SweepForm::*text;
  std::optional<std::string> SweepOverrides::*target;
  const char* help;
};
const std::vector<FormField>& axis_fields();
const std::vector<FormField>& protocol_form_fields();

SweepOverrides to_overrides(const SweepForm& form);
// The run this form describes: the preset (when set) with the fields applied. Throws SpecError
// naming the flag, the value and what is allowed, as `attnscope run` would.
SweepSpec form_spec(const SweepForm& form, const std::string& presets_dir);
// The `attnscope run` options this form stands for (cli::run_args builds the command from them).
cli::RunOptions to_run_options(const SweepForm& form);
// "attnscope run --preset cpu-quick --seq 64,128 ...", shell-quoted where needed.
std::string command_line(const SweepForm& form);

// The value of each field in `spec`, as placeholder text: "64,128"; groups that differ are joined
// with " | "; empty when the spec leaves the axis at its default. Keyed by FormField::key.
std::string spec_field_text(const SweepSpec& spec, const std::string& key);

nlohmann::json form_to_json(const SweepForm& form);
// Unknown keys are ignored and wrong types leave the field at its default (a settings file from
// another version must never stop the GUI).
SweepForm form_from_json(const nlohmann::json& j);

}  // namespace attn::gui
