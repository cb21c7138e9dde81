// `attnscope run`'s plan: from the flags and preset (spec -> backend -> cases, this shard's slice),
// or the stored plan of --resume, which the flags, when given, must reproduce.
#pragma once
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "app/cli/commands.hpp"
#include "profiling/result.hpp"
#include "profiling/sweep/sweep_spec.hpp"
#include "profiling/worker/shard.hpp"
#include "reports/plan_store.hpp"

namespace attn::cli {

// Bad flags or files found while setting the run up: exit 2 with this message.
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What this invocation runs.
struct RunPlan {
  SweepSpec spec;  // protocol, baseline, name (from the flags, or from the stored run on --resume)
  Backend backend = Backend::cpu;
  PlanFile file;  // the cases of this run (this shard), with their indices in the whole plan
  std::filesystem::path out_dir;
};

// The backend the debug and Python kernels are registered for, before the spec is read (the spec
// names them): --backend when given, else the preset's `backend` when it names one, else the default
// choice of this host (cuda where a GPU is usable).
Backend backend_before_spec(const SweepOverrides& o);
// Registers the debug kernels of `backend`; BadInput when the other backend's are registered.
void enable_debug_kernels(Backend backend);
// A local worker cannot run the cuda backend without a GPU: said before any worker starts.
std::string no_gpu_message(const std::string& what, const std::string& why);
// spec -> backend -> plan, as `run` without --resume does it. Throws BadInput.
void plan_from_flags(const RunOptions& options, const std::optional<Shard>& shard, bool debug, RunPlan& rp);
// --resume DIR: the stored plan (or the flags' plan, which must equal it) and the stored protocol.
// Throws BadInput.
void plan_for_resume(const RunOptions& options, const std::optional<Shard>& shard_flag, RunPlan& rp,
                     const RunInfo& stored_run);

}  // namespace attn::cli
