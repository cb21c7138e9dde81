// Subcommands of the attnscope executable. Each returns the process exit code.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "profiling/sweep/overrides.hpp"

namespace attn::cli {

constexpr int kExitOk = 0;
constexpr int kExitCaseFailed = 1;
constexpr int kExitBadInput = 2;

struct RunOptions {
  SweepOverrides sweep;
  bool quiet = false;
  std::string command_line;
};

int run_sweep(const RunOptions& options);
int list_kernels(bool as_json);
int list_devices(bool as_json);

// The directory holding the shipped presets: $ATTNSCOPE_PRESETS, else the source tree's copy.
std::string presets_dir();

}  // namespace attn::cli
