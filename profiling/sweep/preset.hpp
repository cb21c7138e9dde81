// Sweep presets: TOML files (format in docs/presets.md) read into a SweepSpec, and the lookup of a
// preset by name in the presets folder (assets/presets).
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "profiling/sweep/sweep_spec.hpp"

namespace attn {

// Reads and checks a preset. Every problem (TOML syntax, unknown key, wrong type, bad value)
// throws SpecError as "file:line:col: field 'sweep.head_dim' = '<value>': <what>; allowed: <...>".
// Kernel ids are not checked here (a CPU-only build does not know the CUDA ids): plan() does.
// The spec's groups are [sweep] overlaid by each [[group]] (just [sweep] when there is none).
SweepSpec load_preset(const std::filesystem::path& file);

// The same from text; `source` stands for the file name in messages and in SweepSpec::source.
SweepSpec parse_preset(std::string_view toml_text, const std::string& source);

// A bare name (`quick`) means presets_dir/quick.toml; anything with a '/' or ending in .toml is a
// path. Unknown name: SpecError listing the available presets; missing file: SpecError.
std::filesystem::path resolve_preset(std::string_view name_or_path, const std::filesystem::path& presets_dir);

// A preset file that load_preset() reads back into an equal spec (name, description, kernels,
// baseline, backend, every group's axes, the whole protocol). profiling/sweep/preset_writer.cpp.
std::string preset_toml(const SweepSpec& spec);

// Preset names (file stems) in presets_dir, sorted; empty when the folder does not exist.
std::vector<std::string> list_presets(const std::filesystem::path& presets_dir);

}  // namespace attn
