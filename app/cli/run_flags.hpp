// The flags of `attnscope run` in both directions: registered on a CLI11 subcommand, and built back
// into an argv from RunOptions (the GUI's command, a resumable record), so that parsing a built
// command line gives the same options (tests/app/test_run_command_line.cpp).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "app/cli/commands.hpp"

namespace attn::cli {

// Sweep flags, --quiet, --plan-only and the isolation flags. `o` must outlive the parse.
void add_run_flags(CLI::App& cmd, RunOptions& o);

// --kernel-source FILE.cu (repeatable) into `into`; a name not ending in .cu is refused at parse time.
CLI::Option* add_kernel_source_option(CLI::App& cmd, std::vector<std::string>& into, const std::string& help);
// --python-kernel FILE.py:FUNC[=ID] (repeatable) into `into`; checked when loaded.
CLI::Option* add_python_kernel_option(CLI::App& cmd, std::vector<std::string>& into, const std::string& help);

// "run" and the flags that give `o` back (command_line is not a flag and is left out).
std::vector<std::string> run_args(const RunOptions& o);

// `exe run ...`, shell-quoted.
std::string run_command_line(const std::string& exe, const RunOptions& o);

}  // namespace attn::cli
