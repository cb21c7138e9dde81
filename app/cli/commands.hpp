// Subcommands of the attnscope executable. Each returns the process exit code.
#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/isolation_flags.hpp"
#include "profiling/sweep/overrides.hpp"

namespace attn::cli {

constexpr int kExitOk = 0;
constexpr int kExitCaseFailed = 1;
constexpr int kExitBadInput = 2;

struct RunOptions {
  SweepOverrides sweep;
  bool quiet = false;
  bool plan_only = false;    // --plan-only: write OUT/plan.jsonl and exit
  bool report = false;       // write report.md and its figures (PNG + SVG) into the run directory at the end
  std::string command_line;  // as typed, for the run record (not a flag)
  IsolationOptions isolation;
  std::vector<std::string> plugins;         // --plugin PATH (repeatable), after ATTNSCOPE_PLUGIN_PATH's
  std::vector<std::string> kernel_sources;  // --kernel-source FILE.cu (repeatable)
  std::vector<std::string> python_kernels;  // --python-kernel FILE.py:FUNC[=ID] (repeatable)
};

int run_sweep(const RunOptions& options);

// `attnscope worker` (app/cli/worker_command.cpp).
struct WorkerOptions {
  std::optional<std::string> backend;
  int device = 0;
  bool debug_kernels = false;
  std::vector<std::string> plugins;         // --plugin PATH: plug-ins to load when no setup line names them
  std::vector<std::string> kernel_sources;  // --kernel-source FILE.cu, likewise
};
void add_worker_flags(CLI::App& cmd, WorkerOptions& o);
int run_worker_command(const WorkerOptions& options);

// `attnscope merge` (app/cli/merge_command.cpp).
struct MergeOptions {
  std::vector<std::string> inputs;  // shard run directories (or their results.jsonl)
  std::string out;
  bool force = false;
  std::string plan;  // --plan FILE: the whole plan, when a shard may have left nothing behind
  std::string command_line;
};
void add_merge_flags(CLI::App& cmd, MergeOptions& o);
int merge_runs(const MergeOptions& options);

// `attnscope slurm` (app/cli/slurm_command.cpp): a sweep as a Slurm job array plus a merge job.
struct SlurmOptions {
  SweepOverrides sweep;
  int shards = 0;
  std::optional<std::string> partition, time, account, case_timeout;
  std::vector<std::string> sbatch_args;
  std::string sbatch = "sbatch";
  bool dry_run = false;
};
void add_slurm_flags(CLI::App& cmd, SlurmOptions& o);
int submit_slurm(const SlurmOptions& options);

// The registry, plus the kernels of the plug-ins (ATTNSCOPE_PLUGIN_PATH, then `plugins`), marked with
// their library. A plug-in that cannot be loaded: exit 2 naming it.
int list_kernels(bool as_json, const std::vector<std::string>& plugins = {},
                 const std::vector<std::string>& kernel_sources = {},
                 const std::vector<std::string>& python_kernels = {});
int list_devices(bool as_json);

// The directory holding the shipped presets: $ATTNSCOPE_PRESETS, else the source tree's copy, else
// the installed one (<prefix>/share/attnscope/presets).
std::string presets_dir();

}  // namespace attn::cli
