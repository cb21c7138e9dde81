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
#include "app/cli/report_commands.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/devices.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/engine/sampler.hpp"
#include "profiling/result.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/sweep/variant.hpp"
#include "profiling/worker/shard.hpp"
#include "profiling/worker/supervisor.hpp"
#include "reports/csv_writer.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plan_store.hpp"
#include "reports/summary_table.hpp"
#include "reports/text_format.hpp"
#include "reports/worker_json.hpp"

namespace attn::cli {

namespace {

namespace fs = std::filesystem;

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_sigint(int) { g_interrupted = 1; }

// Bad flags or files found while setting the run up: exit 2 with this message.
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Backend pick_backend(const SweepSpec& spec) {
  if (spec.backend) return *spec.backend;
  return cuda_device_available() ? Backend::cuda : Backend::cpu;
}

bool failed(Status s) {
  return s == Status::mismatch || s == Status::fault || s == Status::timeout || s == Status::error;
}

bool any_sweep_flag(const SweepOverrides& o) {
  return o.preset || o.kernels || o.any_axis() || o.backend || o.baseline || o.warmup_ms || o.min_samples ||
         o.max_samples || o.max_time_s || o.noise || o.l2 || o.graphs || o.graph_batch || o.seed ||
         o.no_check || o.metrics;
}

bool same_protocol(const Protocol& a, const Protocol& b) {
  return protocol_to_json(a) == protocol_to_json(b);
}

double parse_case_timeout(const IsolationOptions& iso) {
  if (!iso.case_timeout) return kDefaultCaseTimeout_s;
  const std::string& text = *iso.case_timeout;
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(v) || v <= 0 || v > 30 * 24 * 3600.0)
    throw BadInput(fmt::format("--case-timeout '{}': expected seconds > 0 (e.g. 5, 0.5, 3600; default {:g})",
                               text, kDefaultCaseTimeout_s));
  return v;
}

// The backend the debug kernels are registered for, before the spec is read (the spec names them):
// --backend when given, else the default choice of this host.
Backend backend_before_spec(const SweepOverrides& o) {
  if (o.backend)
    if (const auto b = parse_backend(*o.backend)) return *b;
  return cuda_device_available() ? Backend::cuda : Backend::cpu;
}

void enable_debug_kernels(Backend backend) {
  try {
    register_debug_kernels(backend);
  } catch (const std::logic_error& e) {
    throw BadInput(std::string("--debug-kernels: ") + e.what());
  }
}

// What this invocation runs.
struct RunPlan {
  SweepSpec spec;  // protocol, baseline, name (from the flags, or from the stored run on --resume)
  Backend backend = Backend::cpu;
  PlanFile file;  // the cases of this run (this shard), with their indices in the whole plan
  fs::path out_dir;
};

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

// A local worker cannot run the cuda backend without a GPU: said before any worker starts.
std::string no_gpu_message(const std::string& what, const std::string& why) {
  return fmt::format(
      "{}: the cuda backend needs a GPU and there is none here ({}); run with --backend cpu, or "
      "reach a GPU with --worker-cmd",
      what, why);
}

// spec -> backend -> plan, as `run` without --resume does it.
void plan_from_flags(const RunOptions& options, const std::optional<Shard>& shard, bool debug, RunPlan& rp) {
  try {
    // Without --preset and without axis flags: the default sweep of the backend in use.
    const bool gpu = cuda_device_available();
    const bool cpu_requested = options.sweep.backend && *options.sweep.backend == "cpu";
    const char* fallback = gpu && !cpu_requested ? "quick" : "cpu-quick";
    const bool use_default = !options.sweep.preset && !options.sweep.any_axis() && !options.sweep.kernels;
    rp.spec = spec_from_overrides(options.sweep, presets_dir(), use_default ? fallback : "");
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
  }
}

// --resume DIR: the stored plan (or the flags' plan, which must equal it) and the stored protocol.
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

// Everything the loop updates: results by plan position, the files, progress and the exit code.
class RunState {
 public:
  RunState(const RunPlan& rp, bool quiet) : m_rp(rp), m_results(rp.file.cases.size()), m_quiet(quiet) {
    for (std::size_t i = 0; i < rp.file.cases.size(); ++i) m_index[rp.file.cases[i].case_id] = i;
  }

  // Fresh run: plan.jsonl, then results.jsonl with `run` as its first line (O_EXCL unless --force).
  void open_fresh(const RunInfo& run, bool force) {
    m_run = run;
    std::error_code ec;
    fs::create_directories(m_rp.out_dir, ec);
    if (ec) throw ResultsIoError(m_rp.out_dir.string() + ": cannot create directory: " + ec.message());
    write_plan(m_rp.out_dir / "plan.jsonl", m_rp.file);
    m_writer.emplace(JsonlWriter::create(m_rp.out_dir / "results.jsonl", run, force));
  }

  void adopt_resumed(JsonlWriter writer, LoadedRun loaded) {
    m_writer.emplace(std::move(writer));
    m_run = loaded.run;
    for (CaseResult& r : loaded.cases) {
      const auto it = m_index.find(r.case_id);
      if (it == m_index.end()) {
        m_foreign.push_back(std::move(r));  // a line not in this plan: kept, never rerun
      } else if (!m_results[it->second]) {
        m_results[it->second] = std::move(r);
        ++m_resumed;
      }
    }
  }

  bool has_writer() const { return m_writer.has_value(); }
  const RunInfo& run_info() const { return m_run; }
  std::size_t resumed() const { return m_resumed; }
  bool finished(std::size_t i) const { return m_results[i].has_value(); }

  void start_progress(std::size_t total) {
    if (!m_quiet) m_progress.emplace(stderr, total, stderr_is_terminal());
  }
  void begin(std::size_t i) {
    const Case& c = m_rp.file.cases[i];
    if (m_progress) m_progress->begin_case(m_recorded, c.kernel + " " + config_label(c.problem, c.knobs));
  }

  // Appends the line (write + fsync) and keeps the result. A failing disk stops the run.
  void record(std::size_t i, CaseResult r) {
    if (m_results[i]) return;  // finished already (a resumed line): a second line would duplicate it
    if (m_writer && m_fatal.empty()) {
      try {
        m_writer->append(r);
      } catch (const std::exception& e) {
        m_fatal = std::string("cannot append to results.jsonl: ") + e.what();
      }
    }
    if (m_progress) m_progress->end_case(r);
    ++m_recorded;
    m_results[i] = std::move(r);
  }

  // Plan-time skips are finished cases too: recorded as soon as the file is open.
  void record_planned_skips() {
    for (std::size_t i = 0; i < m_rp.file.cases.size(); ++i) {
      const Case& c = m_rp.file.cases[i];
      if (c.skip_reason.empty() || finished(i)) continue;
      begin(i);
      record(i, planned_skip_record(c));
    }
  }

  void fail(std::string why) {
    if (m_fatal.empty()) m_fatal = std::move(why);
  }
  const std::string& fatal() const { return m_fatal; }
  std::size_t recorded() const { return m_recorded; }

  // Finishes progress and the file; returns every result, in plan order (foreign lines last).
  std::vector<CaseResult> close() {
    if (m_progress) m_progress->finish();
    m_progress.reset();
    if (m_writer) {
      try {
        m_writer->close();
      } catch (const std::exception& e) {
        fail(std::string("cannot close results.jsonl: ") + e.what());
      }
    }
    std::vector<CaseResult> all;
    for (auto& r : m_results)
      if (r) all.push_back(*r);
    all.insert(all.end(), m_foreign.begin(), m_foreign.end());
    return all;
  }

 private:
  const RunPlan& m_rp;
  std::vector<std::optional<CaseResult>> m_results;
  std::vector<CaseResult> m_foreign;
  std::map<std::string, std::size_t> m_index;
  std::optional<JsonlWriter> m_writer;
  RunInfo m_run;
  std::optional<ProgressReporter> m_progress;
  bool m_quiet;
  std::size_t m_recorded = 0, m_resumed = 0;
  std::string m_fatal;
};

RunInfo base_run_info(const RunOptions& options, const RunPlan& rp) {
  RunInfo run;
  run.run_id = new_run_id(rp.spec.name);
  run.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  run.version = build_version();
  run.git_commit = build_git_commit();
  run.command_line = options.command_line;
  run.protocol = rp.spec.protocol;
  run.baseline = rp.spec.baseline;
  return run;
}

// The run record of a supervised run: the first worker's device record, with this run's identity.
RunInfo run_info_from_device(const RunInfo& device, const RunInfo& base) {
  RunInfo run = device;
  run.schema = base.schema;
  run.run_id = base.run_id;
  run.started_at = base.started_at;
  run.version = base.version;
  run.git_commit = base.git_commit;
  run.command_line = base.command_line;
  run.protocol = base.protocol;
  run.baseline = base.baseline;
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
  std::vector<std::string> commands = iso.worker_cmds;
  if (commands.empty()) commands.emplace_back();  // this executable
  const std::string self = self_executable();
  std::vector<WorkerSlot> slots;
  for (const std::string& cmd : commands) {
    if (!cmd.empty() && cmd.find_first_not_of(" \t") == std::string::npos)
      throw BadInput("--worker-cmd '': expected a shell command that runs `attnscope worker`");
    for (int d : devices) {
      WorkerSlot s;
      if (cmd.empty())
        s.launch.argv = {self, "worker"};
      else
        s.launch.shell_command = cmd;
      s.launch.env = {{"ATTNSCOPE_WORKER_DEVICE", std::to_string(d)}};
      s.setup.backend = rp.backend;
      s.setup.device = d;
      s.setup.protocol = rp.spec.protocol;
      s.setup.debug_kernels = rp.file.debug_kernels;
      s.label = fmt::format("w{} (device {}{})", slots.size(), d, cmd.empty() ? "" : " via '" + cmd + "'");
      slots.push_back(std::move(s));
    }
  }
  return slots;
}

class RunEvents final : public SupervisorEvents {
 public:
  RunEvents(RunState& state, const RunInfo& base, bool force, std::FILE* log)
      : m_state(state), m_base(base), m_force(force), m_log(log) {}

  void worker_ready(std::size_t slot, const RunInfo& device) override {
    if (m_state.has_writer()) {
      const RunInfo& run = m_state.run_info();
      if (run.gpu && device.gpu && run.gpu->name != device.gpu->name && !m_warned) {
        std::fprintf(stderr, "attnscope run: note: this run started on %s; worker %zu runs on %s\n",
                     run.gpu->name.c_str(), slot, device.gpu->name.c_str());
        m_warned = true;
      }
      return;
    }
    try {
      m_state.open_fresh(run_info_from_device(device, m_base), m_force);
      m_state.record_planned_skips();
    } catch (const std::exception& e) {
      m_state.fail(e.what());
    }
  }
  void case_started(std::size_t index, std::size_t) override { m_state.begin(index); }
  void case_finished(std::size_t index, CaseResult result) override {
    m_state.record(index, std::move(result));
  }
  void worker_log(std::size_t slot, const std::string& line) override {
    if (!m_log) return;
    std::fprintf(m_log, "%s [w%zu] %s\n", utc_now("%H:%M:%S").c_str(), slot, line.c_str());
    std::fflush(m_log);
  }
  bool stop_requested() override { return g_interrupted != 0 || !m_state.fatal().empty(); }

 private:
  RunState& m_state;
  const RunInfo& m_base;
  bool m_force;
  std::FILE* m_log;
  bool m_warned = false;
};

}  // namespace

std::string presets_dir() {
  if (const char* env = std::getenv("ATTNSCOPE_PRESETS")) return env;
  return build_source_dir() + "/assets/presets";
}

int run_sweep(const RunOptions& options) {
  const IsolationOptions& iso = options.isolation;
  RunPlan rp;
  double case_timeout_s = kDefaultCaseTimeout_s;
  std::optional<JsonlWriter> resumed_writer;
  LoadedRun loaded;
  try {
    case_timeout_s = parse_case_timeout(iso);
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
    if (iso.resume) {
      const fs::path dir = *iso.resume;
      if (options.sweep.out && fs::path(*options.sweep.out) != dir)
        throw BadInput(
            fmt::format("--out {} and --resume {} name different directories; --resume continues in "
                        "its own directory",
                        *options.sweep.out, dir.string()));
      const fs::path results = dir / "results.jsonl";
      if (!fs::exists(results))
        throw BadInput(
            fmt::format("--resume {}: {} does not exist, so there is nothing to resume; start the "
                        "run with --out {}",
                        dir.string(), results.string(), dir.string()));
      // Read the stored run first: its protocol and plan decide what the flags must match. The file
      // is reopened for appending (and a torn last line cut off) only once the plan is accepted.
      try {
        loaded = read_results(results);
      } catch (const std::exception& e) {
        throw BadInput(fmt::format("--resume {}: {}", dir.string(), e.what()));
      }
      plan_for_resume(options, shard, rp, loaded.run);
      rp.out_dir = dir;
      try {
        resumed_writer.emplace(JsonlWriter::resume(results, loaded));
      } catch (const std::exception& e) {
        throw BadInput(fmt::format("--resume {}: {}", dir.string(), e.what()));
      }
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
      if (!rp.spec.force && fs::exists(rp.out_dir / "results.jsonl"))
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

  RunState state(rp, options.quiet);
  const RunInfo base = base_run_info(options, rp);
  if (resumed_writer) {
    for (const std::string& w : loaded.warnings) std::fprintf(stderr, "attnscope run: %s\n", w.c_str());
    state.adopt_resumed(std::move(*resumed_writer), std::move(loaded));
  }

  const std::vector<Case>& cases = rp.file.cases;
  std::vector<std::size_t> pending;
  std::size_t skipped_at_plan = 0, skips_left = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const bool skip = !cases[i].skip_reason.empty();
    skipped_at_plan += skip ? 1 : 0;
    if (state.finished(i)) continue;
    if (skip)
      ++skips_left;
    else
      pending.push_back(i);
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
      skipped_at_plan, state.resumed() ? fmt::format(", {} already finished", state.resumed()).c_str() : "",
      rp.file.shard
          ? fmt::format(", shard {} of {} planned", rp.file.shard->text(), rp.file.plan_cases).c_str()
          : "",
      where.c_str(), rp.out_dir.c_str());

  g_interrupted = 0;
  auto previous = std::signal(SIGINT, on_sigint);
  state.start_progress(pending.size() + skips_left);
  SupervisorSummary summary;
  bool context_lost = false;
  if (engine) {
    if (!state.has_writer()) {
      try {
        state.open_fresh(in_process_run, rp.spec.force);
      } catch (const std::exception& e) {
        state.fail(e.what());
      }
    }
    if (state.fatal().empty()) state.record_planned_skips();
    for (std::size_t n = 0; n < pending.size() && !g_interrupted && state.fatal().empty(); ++n) {
      const std::size_t i = pending[n];
      state.begin(i);
      state.record(i, engine->run(cases[i]));
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
    std::error_code ec;
    fs::create_directories(rp.out_dir, ec);
    std::FILE* log = std::fopen((rp.out_dir / "workers.log").c_str(), iso.resume ? "a" : "w");
    if (state.has_writer()) state.record_planned_skips();
    SupervisorOptions sup;
    sup.slots = std::move(slots);
    sup.case_timeout_s = case_timeout_s;
    sup.start_timeout_s = std::max(120.0, case_timeout_s);
    RunEvents events(state, base, rp.spec.force, log);
    const JsonWorkerCodec codec;
    summary = supervise(cases, pending, sup, codec, events);
    if (log) std::fclose(log);
  }
  const bool interrupted = g_interrupted != 0;
  std::signal(SIGINT, previous);
  std::vector<CaseResult> results = state.close();

  int exit_code = kExitOk;
  for (const CaseResult& r : results)
    if (failed(r.status)) exit_code = kExitCaseFailed;
  if (!state.fatal().empty()) {
    std::fprintf(stderr, "attnscope run: stopped: %s\n", state.fatal().c_str());
    exit_code = kExitCaseFailed;
  }
  for (const std::string& e : summary.errors) std::fprintf(stderr, "attnscope run: %s\n", e.c_str());
  if (!summary.errors.empty())
    std::fprintf(stderr, "attnscope run: worker output is in %s\n", (rp.out_dir / "workers.log").c_str());
  if (!state.has_writer()) {
    // Nothing is on disk, so there is nothing to --resume: the run starts over.
    std::fprintf(stderr, "attnscope run: %s; no results were written\n",
                 interrupted ? "interrupted before a worker was ready" : "no worker started");
    return interrupted ? 130 : kExitCaseFailed;
  }
  std::size_t unfinished = 0;
  for (std::size_t i : pending) unfinished += state.finished(i) ? 0 : 1;
  if (interrupted) {
    std::fprintf(stderr,
                 "attnscope run: interrupted after %zu of %zu cases; results so far are kept; continue with "
                 "attnscope run --resume %s\n",
                 results.size(), cases.size(), rp.out_dir.c_str());
  } else if ((!summary.not_run.empty() || context_lost) && unfinished > 0) {
    std::fprintf(stderr,
                 "attnscope run: %zu cases were not run; once the cause is fixed, run them with "
                 "attnscope run --resume %s\n",
                 unfinished, rp.out_dir.c_str());
    exit_code = kExitCaseFailed;
  }

  try {
    write_results_csv(rp.out_dir / "results.csv", results);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope run: cannot write results.csv: %s\n", e.what());
    exit_code = kExitCaseFailed;
  }
  std::fputs(format_summary(results, rp.spec.baseline).c_str(), stdout);
  std::printf("results: %s\n         %s\n", (rp.out_dir / "results.jsonl").c_str(),
              (rp.out_dir / "results.csv").c_str());
  if (options.report && !interrupted) {
    std::fflush(stdout);
    ReportCommandOptions report;
    report.results = {rp.out_dir.string()};
    if (make_report(report, options.command_line) != kExitOk) exit_code = kExitCaseFailed;
  }
  return interrupted ? 130 : exit_code;
}

}  // namespace attn::cli
