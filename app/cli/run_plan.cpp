// `attnscope run`'s plan (run_plan.hpp).
#include "app/cli/run_plan.hpp"

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/python_kernels.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "kernels/api/python_entry.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/sweep/preset.hpp"
#include "profiling/sweep/variant.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/result_json.hpp"

namespace attn::cli {

namespace {

namespace fs = std::filesystem;

Backend pick_backend(const SweepSpec& spec) {
  if (spec.backend) return *spec.backend;
  return cuda_device_available() ? Backend::cuda : Backend::cpu;
}

bool any_sweep_flag(const SweepOverrides& o) {
  return o.preset || o.kernels || o.any_axis() || o.backend || o.baseline || o.warmup_ms || o.cooldown_ms ||
         o.min_samples || o.max_samples || o.max_time_s || o.noise || o.l2 || o.graphs || o.graph_batch ||
         o.seed || o.no_check || o.metrics;
}

bool same_protocol(const Protocol& a, const Protocol& b) {
  return protocol_to_json(a) == protocol_to_json(b);
}

PlanFile slice_plan(const std::vector<Case>& all, const std::optional<Shard>& shard, Backend backend,
                    bool debug) {
  PlanFile f;
  f.backend = backend;
  f.debug_kernels = debug;
  f.shard = shard;
  f.plan_cases = all.size();
  f.plan_id = plan_fingerprint(all);
  if (shard) {
    f.plan_index = shard_indices(all, *shard);
  } else {
    for (std::size_t i = 0; i < all.size(); ++i) f.plan_index.push_back(i);
  }
  for (std::size_t i : f.plan_index) f.cases.push_back(all[i]);
  return f;
}

}  // namespace

Backend backend_before_spec(const SweepOverrides& o) {
  if (o.backend)
    if (const auto b = parse_backend(*o.backend)) return *b;
  // A preset that names its backend decides it: Python kernels are described for the backend they
  // will run on, so a NumPy callable in a `backend = "cpu"` preset runs on a GPU host too.
  if (o.preset) {
    try {
      if (const auto b = load_preset(resolve_preset(*o.preset, presets_dir())).backend) return *b;
    } catch (const SpecError&) {
      // Reported, with its position, where the spec is built from the same preset.
    }
  }
  return cuda_device_available() ? Backend::cuda : Backend::cpu;
}

void enable_debug_kernels(Backend backend) {
  try {
    register_debug_kernels(backend);
  } catch (const std::logic_error& e) {
    throw BadInput(std::string("--debug-kernels: ") + e.what());
  }
}

std::string no_gpu_message(const std::string& what, const std::string& why) {
  return fmt::format(
      "{}: the cuda backend needs a GPU and there is none here ({}); run with --backend cpu, or "
      "reach a GPU with --worker-cmd",
      what, why);
}

void plan_from_flags(const RunOptions& options, const std::optional<Shard>& shard, bool debug, RunPlan& rp) {
  try {
    // Without --preset and without axis flags: the default sweep of the backend in use.
    const bool gpu = cuda_device_available();
    const bool cpu_requested = options.sweep.backend && *options.sweep.backend == "cpu";
    const char* fallback = gpu && !cpu_requested ? "quick" : "cpu-quick";
    const bool use_default = !options.sweep.preset && !options.sweep.any_axis() && !options.sweep.kernels;
    rp.spec = spec_from_overrides(options.sweep, presets_dir(), use_default ? fallback : "");
    add_python_adapter_entries(rp.spec);
    set_python_kernel_backend(pick_backend(rp.spec));
    try {
      load_plugins(rp.spec.plugins);
    } catch (const PluginError& e) {
      throw BadInput(rp.spec.source + ": plugins: " + e.what());
    }
    rp.backend = pick_backend(rp.spec);
    if (std::string why;
        rp.backend == Backend::cuda && options.isolation.worker_cmds.empty() && !cuda_device_available(&why))
      throw BadInput(no_gpu_message("--backend cuda", why));
    const std::vector<Case> all = plan(rp.spec, rp.backend);
    // Judged on the whole plan: one shard may hold only skips while the others run.
    std::string why_cpu;
    if (rp.backend == Backend::cpu && !rp.spec.backend && !cuda_device_available(&why_cpu))
      why_cpu = "the cpu backend was chosen: " + why_cpu;
    if (const std::string none = nothing_to_run(all, why_cpu); !none.empty()) throw BadInput(none);
    rp.file = slice_plan(all, shard, rp.backend, debug);
    // As the records name it ("fa2.mma@stages=0" -> "fa2.mma"), so reports find the baseline.
    if (!rp.spec.baseline.empty()) rp.spec.baseline = variant_label_of(rp.spec.baseline);
  } catch (const SpecError& e) {
    throw BadInput(e.what());
  } catch (const PluginError& e) {
    // Planning compiles kernel sources: NVRTC's diagnostics, FILE:LINE:COL each.
    throw BadInput(e.what());
  }
}

void plan_for_resume(const RunOptions& options, const std::optional<Shard>& shard_flag, RunPlan& rp,
                     const RunInfo& stored_run) {
  const fs::path dir = *options.isolation.resume;
  const fs::path plan_path = dir / "plan.jsonl";
  PlanFile stored;
  try {
    stored = read_plan(plan_path);
  } catch (const ResultsIoError& e) {
    throw BadInput(
        fmt::format("--resume {}: cannot read its plan ({}); a run directory from `attnscope run` holds "
                    "plan.jsonl next to results.jsonl. Start a new run with --out instead.",
                    dir.string(), e.what()));
  } catch (const ResultsFormatError& e) {
    throw BadInput(fmt::format("--resume {}: {}", dir.string(), e.what()));
  }
  if (stored.debug_kernels || options.isolation.debug_kernels) enable_debug_kernels(stored.backend);
  rp.spec.protocol = stored_run.protocol;
  rp.spec.baseline = stored_run.baseline;
  rp.backend = stored.backend;
  set_python_kernel_backend(stored.backend);
  if (any_sweep_flag(options.sweep) || shard_flag) {
    RunPlan flags;
    SweepOverrides o = options.sweep;
    if (!o.backend) o.backend = std::string(to_string(stored.backend));
    RunOptions with_backend = options;
    with_backend.sweep = o;
    plan_from_flags(with_backend, shard_flag ? shard_flag : stored.shard, stored.debug_kernels, flags);
    std::string difference;
    if (flags.backend != stored.backend)
      difference = fmt::format("backend {} vs {}", to_string(flags.backend), to_string(stored.backend));
    else if (flags.file.cases.size() != stored.cases.size())
      difference = fmt::format("{} cases vs {}", flags.file.cases.size(), stored.cases.size());
    else if (!same_protocol(flags.spec.protocol, stored_run.protocol))
      difference = "a different measurement protocol";
    for (std::size_t i = 0; difference.empty() && i < stored.cases.size(); ++i)
      if (flags.file.cases[i].case_id != stored.cases[i].case_id)
        difference = fmt::format("case {}: {} {} vs {} {}", i + 1, flags.file.cases[i].kernel,
                                 flags.file.cases[i].problem.full_label(), stored.cases[i].kernel,
                                 stored.cases[i].problem.full_label());
    if (!difference.empty())
      throw BadInput(
          fmt::format("--resume {}: the flags give a different plan than {} ({}); run --resume {} "
                      "without sweep flags to continue the stored plan, or start a new run with --out",
                      dir.string(), plan_path.string(), difference, dir.string()));
  }
  rp.file = std::move(stored);
}

}  // namespace attn::cli
