// How `run` isolates cases (worker processes, time-outs, resume, devices, remote workers, shards):
// the flags' raw text, checked by run_command.cpp, which names the flag in every error.
#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace attn::cli {

// Default --case-timeout [s]: generous enough for the largest preset case (reference, cuDNN error
// bar, timing budget) on a slow GPU, short enough that a hung kernel costs minutes, not the night.
inline constexpr double kDefaultCaseTimeout_s = 600.0;

struct IsolationOptions {
  bool in_process = false;
  std::optional<std::string> case_timeout;  // --case-timeout SECONDS
  std::optional<std::string> resume;        // --resume DIR
  std::optional<std::string> devices;       // --devices all|0,2
  std::vector<std::string> worker_cmds;     // --worker-cmd CMD (repeatable)
  std::optional<std::string> shard;         // --shard k/n
  bool debug_kernels = false;
};

// Registers --in-process, --case-timeout, --resume, --devices, --worker-cmd, --shard and
// --debug-kernels on `cmd` (group "Isolation"). `o` must outlive the parse.
void add_isolation_flags(CLI::App& cmd, IsolationOptions& o);

}  // namespace attn::cli
