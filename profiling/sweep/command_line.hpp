// The one builder of `attnscope run` command lines (the GUI's "copy command", the ncu command of a
// record, the run record's command line): shell quoting, and the sweep flags that give a
// SweepOverrides back when add_sweep_flags (app/cli/sweep_flags.hpp) parses them.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "profiling/sweep/overrides.hpp"

namespace attn {

// POSIX single quotes where needed: plain words (letters, digits, -_.,:/=+@%) stay as they are;
// anything else is 'quoted', a ' inside becoming '\''. The empty string is ''.
std::string shell_quote(std::string_view s);

// argv joined by spaces, each argument quoted: a shell splits it back into the same argv.
std::string join_command_line(const std::vector<std::string>& argv);

// `--flag value` (two arguments) or `--flag=value` (one), as ncu command lines are written.
enum class FlagStyle { separate, joined };

// The sweep flags of `o`, in a fixed order (preset, backend, kernels, baseline, the axes, the
// protocol, out, force); boolean flags as --graphs/--no-graphs, --no-check, --force.
std::vector<std::string> sweep_args(const SweepOverrides& o, FlagStyle style = FlagStyle::separate);

}  // namespace attn
