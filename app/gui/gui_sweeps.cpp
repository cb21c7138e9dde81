// Starting work from the GUI's state (gui_state.hpp): a sweep of the form, a sweep of given cases
// (a watched kernel's version, gui_watch.cpp), a resumed run directory, a replay, and stopping.
#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/run_flags.hpp"
#include "app/gui/gui_state.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/devices.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/worker/shard.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plan_store.hpp"

namespace attn::gui {

namespace fs = std::filesystem;

namespace {
// The devices of the form's --devices text ("0,1", "all"); SpecError names the field.
std::vector<int> form_devices(const SweepForm& form, Backend backend) {
  if (form.devices.empty()) return {0};
  int available = 1;
  std::string why_none;
  if (backend == Backend::cuda && form.devices == "all") {
    const SystemReport sys = describe_system();
    available = static_cast<int>(sys.gpus.size());
    why_none = sys.none_reason;
  }
  return parse_devices(form.devices, available, why_none);
}
}  // namespace

void GuiState::start_sweep() {
  if (m_runner.running()) {
    notify("a job is already running; stop it first (Esc)", true);
    return;
  }
  rebuild_preview();
  if (!preview.valid) {
    notify("cannot start the sweep: " + preview.error, true);
    return;
  }
  if (launch_sweep(preview.spec, preview.backend, preview.cases, settings.form)) save_settings_now();
}

bool GuiState::launch_sweep(const SweepSpec& spec, Backend backend, const std::vector<Case>& cases,
                            const SweepForm& form) {
  SweepJob job;
  job.spec = spec;
  job.command_line = command_line(form);
  job.worker_cmds = worker_commands(form);
  job.case_timeout_s = cli::kDefaultCaseTimeout_s;
  job.start_timeout_s = cli::kDefaultWorkerStartTimeout_s;
  try {
    job.devices = form_devices(form, backend);
    std::optional<Shard> shard;
    if (!form.shard.empty()) shard = parse_shard(form.shard);
    job.plan.backend = backend;
    job.plan.shard = shard;
    job.plan.plan_cases = cases.size();
    job.plan.plan_id = plan_fingerprint(cases);
    if (shard) {
      job.plan.plan_index = shard_indices(cases, *shard);
    } else {
      for (std::size_t i = 0; i < cases.size(); ++i) job.plan.plan_index.push_back(i);
    }
    for (std::size_t i : job.plan.plan_index) job.plan.cases.push_back(cases[i]);
    job.plan.protocol = spec.protocol;
    job.plan.baseline = spec.baseline;
    job.plan.plugins = loaded_plugin_paths();
  } catch (const SpecError& e) {
    notify(std::string("cannot start the sweep: ") + e.what(), true);
    return false;
  }
  if (!job.spec.out_dir.empty()) {
    job.out_dir = job.spec.out_dir;
    if (!job.spec.force && fs::exists(job.out_dir / "results.jsonl")) {
      notify(
          job.out_dir.string() +
              "/results.jsonl already exists; Resume continues it, or clear the output field or pick a new "
              "folder",
          true);
      return false;
    }
  } else {
    const std::string id = new_run_id(job.spec.name);
    job.out_dir = fs::path("runs") / id;
    for (int n = 2; fs::exists(job.out_dir); ++n)
      job.out_dir = fs::path("runs") / fmt::format("{}-{}", id, n);
  }
  if (job.plan.cases.empty()) {
    notify("the sweep plans no case", true);
    return false;
  }
  const std::size_t n = job.plan.cases.size();
  const std::size_t workers = std::max<std::size_t>(1, job.worker_cmds.size()) * job.devices.size();
  const std::string where = job.out_dir.string();
  if (!m_runner.start_sweep(std::move(job))) return false;
  notify(fmt::format("sweep started: {} cases on {} worker{} -> {}", n, workers, workers == 1 ? "" : "s",
                     where));
  return true;
}

bool GuiState::resume_sweep(const std::string& dir) {
  if (m_runner.running()) {
    notify("a job is already running; stop it first (Esc)", true);
    return false;
  }
  SweepJob job;
  try {
    StoredRunDir stored = read_run_dir(dir);
    // The stored plan and protocol; where it runs now comes from the form's worker fields.
    job.plan = std::move(stored.plan);
    if (job.plan.debug_kernels) {
      try {
        register_debug_kernels(job.plan.backend);
      } catch (const std::logic_error&) {
        // already registered by an earlier resume in this session
      }
    }
    job.spec.protocol = stored.loaded.run.protocol;
    job.spec.baseline = stored.loaded.run.baseline;
    job.resume = std::move(stored.loaded);
    job.devices = form_devices(settings.form, job.plan.backend);
  } catch (const std::exception& e) {
    notify(
        fmt::format("cannot resume {}: {} (a run directory from a sweep or `attnscope run` holds plan.jsonl "
                    "and results.jsonl)",
                    dir, e.what()),
        true);
    return false;
  }
  job.out_dir = dir;
  job.worker_cmds = worker_commands(settings.form);
  job.case_timeout_s = cli::kDefaultCaseTimeout_s;
  job.start_timeout_s = cli::kDefaultWorkerStartTimeout_s;
  cli::RunOptions resume_options;
  resume_options.isolation = to_run_options(settings.form).isolation;
  resume_options.isolation.resume = dir;
  resume_options.isolation.shard.reset();  // the stored plan is already the shard
  job.command_line = cli::run_command_line("attnscope", resume_options);
  const std::size_t n = job.plan.cases.size();
  if (!m_runner.start_sweep(std::move(job))) {
    notify("a job is already running; stop it first (Esc)", true);
    return false;
  }
  notify(fmt::format("resuming {}: {} cases planned", dir, n));
  return true;
}

void GuiState::stop_job() {
  if (m_runner.running()) {
    m_runner.stop();
    notify("stopping: finished cases are kept");
  }
}

bool GuiState::start_replay(const std::string& path, double speed) {
  try {
    StoredRun r = load_stored_run(path);
    if (!m_runner.start_replay(std::move(r.data), r.file, speed)) {
      notify("a job is already running; stop it first (Esc)", true);
      return false;
    }
    add_recent(settings, path);
    return true;
  } catch (const std::exception& e) {
    notify(std::string("cannot replay ") + path + ": " + e.what(), true);
    return false;
  }
}

}  // namespace attn::gui
