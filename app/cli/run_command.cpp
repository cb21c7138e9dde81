// `attnscope run`: spec -> plan (or the stored plan of --resume) -> cases run by worker processes
// under the supervisor (default) or by an engine in this process (--in-process) -> results.jsonl
// streamed one fsynced line per finished case, then results.csv and a summary.
#include <fmt/format.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "app/cli/build_info.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/progress.hpp"
#include "app/cli/python_kernels.hpp"
#include "app/cli/report_commands.hpp"
#include "app/cli/run_plan.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/devices.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/engine/sampler.hpp"
#include "profiling/plugin_records.hpp"
#include "profiling/result.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/worker/shard.hpp"
#include "profiling/worker/supervisor.hpp"
#include "profiling/worker/worker_slots.hpp"
#include "reports/csv_writer.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plan_store.hpp"
#include "reports/run_session.hpp"
#include "reports/summary_table.hpp"
#include "reports/text_format.hpp"
#include "reports/time_breakdown.hpp"
#include "reports/worker_json.hpp"

namespace attn::cli {

namespace {

namespace fs = std::filesystem;

volatile std::sig_atomic_t g_interrupted = 0;  // the signal that stopped the run, 0 = none
extern "C" void on_stop_signal(int sig) { g_interrupted = sig; }

bool failed(Status s) {
  return s == Status::mismatch || s == Status::fault || s == Status::timeout || s == Status::error;
}

// Seconds > 0 (at most 30 days) from the text of `flag`; `fallback` when the flag is absent.
double parse_seconds(const std::optional<std::string>& value, const char* flag, double fallback) {
  if (!value) return fallback;
  const std::string& text = *value;
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(v) || v <= 0 || v > 30 * 24 * 3600.0)
    throw BadInput(
        fmt::format("{} '{}': expected seconds > 0 (e.g. 5, 0.5, 3600; default {:g})", flag, text, fallback));
  return v;
}

RunInfo base_run_info(const RunOptions& options, const RunPlan& rp) {
  RunInfo run;
  run.run_id = new_run_id(rp.spec.name);
  run.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  run.version = build_version();
  run.git_commit = build_git_commit();
  run.command_line = options.command_line;
  run.protocol = rp.spec.protocol;
  run.baseline = rp.spec.baseline;
  run.plugins = loaded_plugin_records();
  return run;
}

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    throw BadInput("cannot find this executable (/proc/self/exe: " + ec.message() + ") to start workers");
  return p.string();
}

std::vector<WorkerSlot> worker_slots(const IsolationOptions& iso, const RunPlan& rp) {
  int available = 1;
  std::string why_none;
  if (rp.backend == Backend::cuda && iso.devices && *iso.devices == "all") {
    const SystemReport sys = describe_system();
    available = static_cast<int>(sys.gpus.size());
    why_none = sys.none_reason;
  }
  std::vector<int> devices{0};
  if (iso.devices) {
    try {
      devices = parse_devices(*iso.devices, available, why_none);
    } catch (const SpecError& e) {
      throw BadInput(e.what());
    }
  }
  WorkerSetup setup;
  setup.backend = rp.backend;
  setup.protocol = rp.spec.protocol;
  setup.debug_kernels = rp.file.debug_kernels;
  setup.plugins = loaded_plugin_paths();
  try {
    const WorkerProgram program = worker_program(self_executable());
    return make_worker_slots(iso.worker_cmds, devices, SpawnSpec{program.argv, {}, program.env}, setup);
  } catch (const SpecError& e) {
    throw BadInput(e.what());
  }
}

// The session's notices (a worker on another GPU than the run record's) on stderr, --quiet or not.
class NoticePrinter final : public RunObserver {
 public:
  void notice(const std::string& text) override {
    std::fprintf(stderr, "\nattnscope run: note: %s\n", text.c_str());
  }
};

// The stop check of the session: SIGINT or SIGTERM arrived.
bool interrupted() { return g_interrupted != 0; }

// SIGINT and SIGTERM stop the run the same way (workers' process groups killed, finished cases
// kept); restored on destruction.
class StopSignals {
 public:
  StopSignals() {
    g_interrupted = 0;
    m_int = std::signal(SIGINT, on_stop_signal);
    m_term = std::signal(SIGTERM, on_stop_signal);
  }
  ~StopSignals() {
    std::signal(SIGINT, m_int);
    std::signal(SIGTERM, m_term);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void (*m_int)(int) = SIG_DFL;
  void (*m_term)(int) = SIG_DFL;
};

}  // namespace

std::string presets_dir() {
  if (const char* env = std::getenv("ATTNSCOPE_PRESETS")) return env;
  // The checkout it was built from, else the installed copy (`cmake --install`, e.g. for the module).
  const std::string source = build_source_dir() + "/assets/presets";
  const std::string installed = build_install_prefix() + "/share/attnscope/presets";
  std::error_code ec;
  return fs::exists(source, ec) || !fs::exists(installed, ec) ? source : installed;
}

int run_sweep(const RunOptions& options) {
  const IsolationOptions& iso = options.isolation;
  // Plug-in kernels join the registry before anything names a kernel.
  try {
    load_plugins(plugin_paths(options.plugins));
  } catch (const PluginError& e) {
    std::fprintf(stderr, "attnscope run: --plugin %s\n", e.what());
    return kExitBadInput;
  }
  try {
    load_plugins(options.kernel_sources);
  } catch (const PluginError& e) {
    std::fprintf(stderr, "attnscope run: --kernel-source %s\n", e.what());
    return kExitBadInput;
  }
  try {
    load_python_kernels(options.python_kernels, backend_before_spec(options.sweep));
  } catch (const PluginError& e) {
    std::fprintf(stderr, "attnscope run: --python-kernel %s\n", e.what());
    return kExitBadInput;
  }
  try {
    if (options.sweep.kernels) load_plugins(python_adapter_entries(*options.sweep.kernels));
  } catch (const PluginError& e) {
    std::fprintf(stderr, "attnscope run: --kernels: %s\n", e.what());
    return kExitBadInput;
  }
  RunPlan rp;
  double case_timeout_s = kDefaultCaseTimeout_s;
  double start_timeout_s = kDefaultWorkerStartTimeout_s;
  LoadedRun loaded;
  bool planned_only = false;  // --resume of a directory that holds only plan.jsonl (from --plan-only)
  try {
    case_timeout_s = parse_seconds(iso.case_timeout, "--case-timeout", kDefaultCaseTimeout_s);
    start_timeout_s =
        parse_seconds(iso.worker_start_timeout, "--worker-start-timeout", kDefaultWorkerStartTimeout_s);
    std::optional<Shard> shard;
    if (iso.shard) {
      try {
        shard = parse_shard(*iso.shard);
      } catch (const SpecError& e) {
        throw BadInput(e.what());
      }
    }
    if (iso.in_process && (iso.devices || !iso.worker_cmds.empty()))
      throw BadInput(std::string(iso.devices ? "--devices" : "--worker-cmd") +
                     " needs worker processes; drop --in-process (which runs every case in this process)");
    if (iso.resume && options.plan_only)
      throw BadInput(
          fmt::format("--plan-only and --resume {}: a run directory already holds its plan "
                      "({}/plan.jsonl); drop --plan-only to run it",
                      *iso.resume, *iso.resume));
    if (iso.resume) {
      const fs::path dir = *iso.resume;
      if (options.sweep.out && fs::path(*options.sweep.out) != dir)
        throw BadInput(
            fmt::format("--out {} and --resume {} name different directories; --resume continues in "
                        "its own directory",
                        *options.sweep.out, dir.string()));
      const fs::path results = dir / "results.jsonl";
      planned_only = !fs::exists(results) && fs::exists(dir / "plan.jsonl");
      if (!fs::exists(results) && !planned_only)
        throw BadInput(
            fmt::format("--resume {}: neither {} nor plan.jsonl exists, so there is nothing to resume; start "
                        "the run with --out {}",
                        dir.string(), results.string(), dir.string()));
      if (planned_only) {
        // A directory `run --plan-only` left: its plan header keeps the protocol, baseline and
        // plug-ins, which stand in for the run record.
        try {
          const PlanFile stored = read_plan(dir / "plan.jsonl");
          if (!stored.protocol)
            throw BadInput(
                fmt::format("--resume {}: its plan.jsonl keeps no protocol (written by an older "
                            "attnscope); plan it again with --plan-only, or run it with --out",
                            dir.string()));
          loaded.run.protocol = *stored.protocol;
          loaded.run.baseline = stored.baseline;
          for (const std::string& p : stored.plugins) {
            PluginRecord r;
            r.path = p;
            loaded.run.plugins.push_back(std::move(r));
          }
        } catch (const ResultsIoError& e) {
          throw BadInput(fmt::format("--resume {}: {}", dir.string(), e.what()));
        } catch (const ResultsFormatError& e) {
          throw BadInput(fmt::format("--resume {}: {}", dir.string(), e.what()));
        }
      } else {
        // Read the stored run first: its protocol and plan decide what the flags must match. The
        // file is reopened for appending (and a torn last line cut off) only once the plan is accepted.
        try {
          loaded = read_results(results);
        } catch (const std::exception& e) {
          throw BadInput(fmt::format("--resume {}: {}", dir.string(), e.what()));
        }
      }
      // The plug-ins the run was started with, by the paths its record names.
      try {
        std::vector<std::string> stored;
        for (const PluginRecord& p : loaded.run.plugins) stored.push_back(p.path);
        load_plugins(stored);
      } catch (const PluginError& e) {
        throw BadInput(fmt::format("--resume {}: the run's plug-in: {}", dir.string(), e.what()));
      }
      plan_for_resume(options, shard, rp, loaded.run);
      rp.out_dir = dir;
    } else {
      if (iso.debug_kernels) enable_debug_kernels(backend_before_spec(options.sweep));
      plan_from_flags(options, shard, iso.debug_kernels, rp);
      rp.out_dir = rp.spec.out_dir.empty() ? fs::path("runs") / base_run_info(options, rp).run_id
                                           : fs::path(rp.spec.out_dir);
      if (std::error_code ec; fs::exists(rp.out_dir, ec) && !fs::is_directory(rp.out_dir, ec))
        throw BadInput(
            fmt::format("--out {}: is a file, not a directory; --out names the run directory "
                        "that will hold results.jsonl (choose a new path)",
                        rp.out_dir.string()));
      if (!rp.spec.force && !options.plan_only && fs::exists(rp.out_dir / "results.jsonl"))
        throw BadInput((rp.out_dir / "results.jsonl").string() +
                       ": results file already exists; pass --force to overwrite it, choose a new --out, or "
                       "continue it with --resume " +
                       rp.out_dir.string());
    }
    // A local worker cannot run the cuda backend without a GPU: say so now, not after three failed
    // worker starts. A --worker-cmd may reach a GPU elsewhere, so it is left to try.
    if (std::string why;
        rp.backend == Backend::cuda && iso.worker_cmds.empty() && !cuda_device_available(&why))
      throw BadInput(
          no_gpu_message(iso.resume ? "--resume " + *iso.resume + " (a cuda run)" : "--backend cuda", why));
  } catch (const BadInput& e) {
    std::fprintf(stderr, "attnscope run: %s\n", e.what());
    return kExitBadInput;
  }

  const RunInfo base = base_run_info(options, rp);
  SessionSetup setup;
  setup.out_dir = rp.out_dir;
  if (!rp.file.protocol) {
    // Kept in plan.jsonl, so that a --plan-only directory can be started with --resume.
    rp.file.protocol = rp.spec.protocol;
    rp.file.baseline = rp.spec.baseline;
    rp.file.plugins = loaded_plugin_paths();
  }
  setup.plan = rp.file;
  setup.base = base;
  setup.force = rp.spec.force;
  std::unique_ptr<RunSession> session;
  try {
    if (iso.resume && !planned_only) {
      for (const std::string& w : loaded.warnings) std::fprintf(stderr, "attnscope run: %s\n", w.c_str());
      try {
        session = std::make_unique<RunSession>(std::move(setup), std::move(loaded));
      } catch (const std::exception& e) {
        throw BadInput(fmt::format("--resume {}: {}", rp.out_dir.string(), e.what()));
      }
    } else {
      // The plan is on disk before any worker starts: a run whose workers never answer leaves it.
      session = std::make_unique<RunSession>(std::move(setup));
    }
  } catch (const BadInput& e) {
    std::fprintf(stderr, "attnscope run: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope run: %s\n", e.what());
    return kExitCaseFailed;
  }
  const std::vector<Case>& cases = session->cases();
  if (options.plan_only) {
    std::printf("plan: %zu cases (%zu skipped at planning) on %s -> %s\n", cases.size(),
                session->skipped_at_plan(), std::string(to_string(rp.backend)).c_str(),
                (rp.out_dir / "plan.jsonl").c_str());
    return kExitOk;
  }

  std::unique_ptr<CaseEngine> engine;
  std::vector<WorkerSlot> slots;
  try {
    if (iso.in_process) {
      try {
        engine = make_engine(rp.backend, rp.spec.protocol);
      } catch (const std::exception& e) {
        throw BadInput(e.what());
      }
    } else {
      slots = worker_slots(iso, rp);
    }
  } catch (const BadInput& e) {
    std::fprintf(stderr, "attnscope run: %s\n", e.what());
    return kExitBadInput;
  }

  if (iso.in_process && iso.case_timeout)
    std::fprintf(stderr,
                 "attnscope run: note: --case-timeout is not enforced with --in-process (a hung case stalls "
                 "the run)\n");
  RunInfo in_process_run = base;
  if (engine) engine->describe(in_process_run);
  std::string where = std::string(to_string(rp.backend));
  if (engine && in_process_run.gpu) where += " (" + in_process_run.gpu->name + ")";
  where += iso.in_process ? ", in this process"
                          : fmt::format(", {} worker{}", slots.size(), slots.size() == 1 ? "" : "s");
  std::fprintf(
      stderr, "attnscope run: %zu cases (%zu skipped at planning%s%s) on %s -> %s\n", cases.size(),
      session->skipped_at_plan(),
      session->resumed() ? fmt::format(", {} already finished", session->resumed()).c_str() : "",
      rp.file.shard
          ? fmt::format(", shard {} of {} planned", rp.file.shard->text(), rp.file.plan_cases).c_str()
          : "",
      where.c_str(), rp.out_dir.c_str());

  const std::vector<std::size_t> pending = session->pending();
  StopSignals signals;
  session->set_stop_check(interrupted);
  NoticePrinter notices;
  session->add_observer(&notices);
  std::optional<ProgressObserver> progress;
  if (!options.quiet) {
    progress.emplace(stderr, session->to_record(), stderr_is_terminal());
    session->add_observer(&*progress);
  }
  session->start();
  SupervisorSummary summary;
  bool context_lost = false;
  if (engine) {
    session->open(in_process_run);
    for (std::size_t n = 0; n < pending.size() && !session->stop_requested(); ++n) {
      const std::size_t i = pending[n];
      session->case_started(i, 0);
      if (n + 1 < pending.size() && !(cases[pending[n + 1]].problem == cases[i].problem))
        engine->expect_next(cases[pending[n + 1]].problem);
      session->case_finished(i, engine->run(cases[i]));
      if (engine->context_lost()) {
        std::fprintf(stderr,
                     "\nattnscope run: the CUDA context was lost (%s); the %zu remaining cases are not run "
                     "(without --in-process a fresh worker would take them). Results so far are in %s.\n",
                     engine->context_lost_reason().c_str(), pending.size() - n - 1, rp.out_dir.c_str());
        context_lost = true;
        break;
      }
    }
  } else {
    session->use_workers(slots);
    SupervisorOptions sup;
    sup.slots = std::move(slots);
    sup.case_timeout_s = case_timeout_s;
    sup.start_timeout_s = start_timeout_s;
    const JsonWorkerCodec codec;
    summary = supervise(cases, pending, sup, codec, *session);
  }
  const int stop_signal = g_interrupted;
  if (progress) progress->finish();
  std::vector<CaseResult> results = session->close();

  int exit_code = kExitOk;
  for (const CaseResult& r : results)
    if (failed(r.status)) exit_code = kExitCaseFailed;
  if (!session->fatal().empty()) {
    std::fprintf(stderr, "attnscope run: stopped: %s\n", session->fatal().c_str());
    exit_code = kExitCaseFailed;
  }
  for (const std::string& e : summary.errors) std::fprintf(stderr, "attnscope run: %s\n", e.c_str());
  if (!summary.errors.empty())
    std::fprintf(stderr, "attnscope run: worker output is in %s\n", (rp.out_dir / "workers.log").c_str());
  if (!session->has_results_file()) {
    // No results are on disk, so there is nothing to --resume: the run starts over (its plan is kept).
    std::fprintf(stderr, "attnscope run: %s; no results were written; the plan is in %s\n",
                 stop_signal != 0 ? "interrupted before a worker was ready" : "no worker started",
                 (rp.out_dir / "plan.jsonl").c_str());
    return stop_signal != 0 ? 128 + stop_signal : kExitCaseFailed;
  }
  std::size_t unfinished = 0;
  for (std::size_t i : pending) unfinished += session->finished(i) ? 0 : 1;
  if (stop_signal != 0) {
    std::fprintf(stderr,
                 "attnscope run: interrupted after %zu of %zu cases (%s); results so far are kept; continue "
                 "with attnscope run --resume %s\n",
                 results.size(), cases.size(), signal_name(stop_signal).c_str(), rp.out_dir.c_str());
  } else if ((!summary.not_run.empty() || context_lost) && unfinished > 0) {
    std::fprintf(stderr,
                 "attnscope run: %zu cases were not run; once the cause is fixed, run them with "
                 "attnscope run --resume %s\n",
                 unfinished, rp.out_dir.c_str());
    exit_code = kExitCaseFailed;
  }

  std::fputs(format_summary(results, rp.spec.baseline).c_str(), stdout);
  if (const auto& totals = session->run_info().totals)
    std::fputs(format_time_breakdown(*totals).c_str(), stdout);
  std::printf("results: %s\n         %s\n", (rp.out_dir / "results.jsonl").c_str(),
              (rp.out_dir / "results.csv").c_str());
  if (options.report && stop_signal == 0) {
    std::fflush(stdout);
    ReportCommandOptions report;
    report.results = {rp.out_dir.string()};
    if (make_report(report, options.command_line) != kExitOk) exit_code = kExitCaseFailed;
  }
  return stop_signal != 0 ? 128 + stop_signal : exit_code;
}

}  // namespace attn::cli
