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

// Default --worker-start-timeout [s]: a worker's handshake (spawn, ssh, CUDA and library start-up,
// device record) takes seconds; a command that never answers must not hold the run for long.
inline constexpr double kDefaultWorkerStartTimeout_s = 60.0;

struct IsolationOptions {
  bool in_process = false;
  std::optional<std::string> case_timeout;          // --case-timeout SECONDS
  std::optional<std::string> worker_start_timeout;  // --worker-start-timeout SECONDS
  std::optional<std::string> resume;                // --resume DIR
  std::optional<std::string> devices;               // --devices all|0,2
  std::vector<std::string> worker_cmds;             // --worker-cmd CMD (repeatable)
  std::optional<std::string> shard;                 // --shard k/n
  bool debug_kernels = false;
};

// Registers --in-process, --case-timeout, --worker-start-timeout, --resume, --devices, --worker-cmd, --shard
// and
// --debug-kernels on `cmd` (group "Isolation"). `o` must outlive the parse.
void add_isolation_flags(CLI::App& cmd, IsolationOptions& o);

}  // namespace attn::cli
