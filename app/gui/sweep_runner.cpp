// JobRunner: the sweep thread (plan -> supervisor -> worker processes -> results.jsonl + store)
// and the replay thread (a saved run fed to the store at its recorded pace).
#include "app/gui/sweep_runner.hpp"

#include <fmt/format.h>

#include "app/cli/build_info.hpp"
#include "app/cli/python_kernels.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/plugin_records.hpp"
#include "profiling/result.hpp"
#include "profiling/sweep/variant.hpp"
#include "profiling/worker/supervisor.hpp"
#include "profiling/worker/worker_slots.hpp"
#include "reports/plan_store.hpp"
#include "reports/text_format.hpp"
#include "reports/worker_json.hpp"

namespace attn::gui {

namespace fs = std::filesystem;

namespace {

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

bool failed(Status s) {
  return s == Status::mismatch || s == Status::fault || s == Status::timeout || s == Status::error ||
         s == Status::oom;
}

std::string device_of(const RunInfo& run) {
  if (run.gpu && !run.gpu->name.empty()) return run.gpu->name;
  return run.cpu_model.empty() ? run.backend : run.cpu_model;
}

}  // namespace

// The session's events -> store and progress (the session itself writes the files). All on the
// sweep thread; the UI reads progress under the runner's lock and the store under its own.
class SweepObserver final : public RunObserver {
 public:
  SweepObserver(JobRunner& runner, std::uint64_t key) : m_runner(runner), m_key(key) {}

  void run_opened(const RunInfo& run, const fs::path& file) override {
    m_runner.m_store.set_run_info(m_key, run);
    m_runner.m_store.set_file(m_key, file);
    std::lock_guard lock(m_runner.m_mutex);
    m_runner.m_progress.device = device_of(run);
    m_runner.m_progress.backend = run.backend;
    m_runner.m_progress.out_file = file;
  }

  void case_started(std::size_t, const Case& c) override {
    std::lock_guard lock(m_runner.m_mutex);
    m_runner.m_progress.current = c.kernel + " " + config_label(c.problem, c.knobs);
  }

  void case_recorded(std::size_t, const CaseResult& r) override {
    {
      std::lock_guard lock(m_runner.m_mutex);
      JobProgress& p = m_runner.m_progress;
      ++p.done;
      if (r.status == Status::ok) ++p.ok;
      if (r.status == Status::skipped) ++p.skipped;
      if (failed(r.status)) ++p.failed;
      if (r.clocks) p.clocks = r.clocks;
      if (r.status != Status::skipped && r.wall_s > 0) {
        m_runner.m_measured_wall_s += r.wall_s;
        ++m_runner.m_measured;
      }
    }
    m_runner.m_store.append(m_key, r);
  }

  void worker_changed(std::size_t slot, const WorkerStatus& w) override {
    std::lock_guard lock(m_runner.m_mutex);
    std::vector<WorkerStatus>& ws = m_runner.m_progress.workers;
    if (ws.size() <= slot) ws.resize(slot + 1);
    ws[slot] = w;
  }

  void worker_log(std::size_t slot, const std::string& line) override {
    m_log.push_back(fmt::format("[w{}] {}", slot, line));
    if (m_log.size() > 200) m_log.erase(m_log.begin());
  }

  void notice(const std::string& text) override {
    std::lock_guard lock(m_runner.m_mutex);
    m_runner.m_progress.message = text;
  }

  const std::vector<std::string>& log() const { return m_log; }

 private:
  JobRunner& m_runner;
  std::uint64_t m_key;
  std::vector<std::string> m_log;
};

JobRunner::~JobRunner() {
  m_stop = true;
  if (m_thread.joinable()) m_thread.join();
}

void JobRunner::join_finished() {
  if (m_thread.joinable() && !running()) m_thread.join();
}

bool JobRunner::begin(const std::string& kind, std::size_t total) {
  join_finished();
  std::lock_guard lock(m_mutex);
  if (m_progress.running) {
    m_progress.message = "a " + m_progress.kind + " is running; stop it first";
    return false;
  }
  m_progress = JobProgress{};
  m_progress.running = true;
  m_progress.kind = kind;
  m_progress.total = total;
  m_started = std::chrono::steady_clock::now();
  m_measured_wall_s = 0;
  m_measured = 0;
  m_stop = false;
  return true;
}

bool JobRunner::start_sweep(SweepJob job) {
  if (!begin("sweep", job.plan.cases.size())) return false;
  m_thread = std::thread([this, job = std::move(job)]() mutable { run_sweep(std::move(job)); });
  return true;
}

bool JobRunner::start_replay(LoadedRun run, fs::path source, double speed) {
  if (!begin("replay", run.cases.size())) return false;
  {
    std::lock_guard lock(m_mutex);
    m_progress.out_file = std::move(source);
    m_progress.device = device_of(run.run);
    m_progress.backend = run.run.backend;
  }
  m_thread =
      std::thread([this, run = std::move(run), speed]() mutable { run_replay(std::move(run), speed); });
  return true;
}

void JobRunner::stop() { m_stop = true; }

bool JobRunner::running() const {
  std::lock_guard lock(m_mutex);
  return m_progress.running;
}

JobProgress JobRunner::progress() const {
  std::lock_guard lock(m_mutex);
  JobProgress p = m_progress;
  if (p.running) {
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
    // ETA: cases still to measure x the mean wall time of those measured so far.
    if (m_measured > 0 && p.total >= p.done) {
      p.eta_s = m_measured_wall_s / static_cast<double>(m_measured) * static_cast<double>(p.total - p.done);
    }
  }
  return p;
}

void JobRunner::run_sweep(SweepJob job) {
  RunInfo base;
  base.run_id = fs::path(job.out_dir).filename().string();
  base.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  base.version = cli::build_version();
  base.git_commit = cli::build_git_commit();
  base.command_line = job.command_line;
  base.protocol = job.spec.protocol;
  // As the records name it ("fa2.mma@stages=0" -> "fa2.mma"), so plots find the baseline.
  base.baseline = job.spec.baseline.empty() ? std::string() : variant_label_of(job.spec.baseline);
  base.backend = std::string(to_string(job.plan.backend));
  base.plugins = loaded_plugin_records();

  StoredRun stored;
  stored.label = base.run_id;
  stored.data.run = job.resume ? job.resume->run : base;
  stored.live = true;
  stored.origin = job.resume ? "resumed" : "sweep";
  if (job.resume) stored.file = job.out_dir / "results.jsonl";
  const std::uint64_t key = m_store.add(std::move(stored));
  {
    std::lock_guard lock(m_mutex);
    m_progress.store_key = key;
    m_progress.backend = base.backend;
    m_progress.out_file = job.out_dir / "results.jsonl";
    if (job.resume) m_progress.device = device_of(job.resume->run);
  }

  std::string message;
  SweepObserver observer(*this, key);
  std::unique_ptr<RunSession> session;
  try {
    SessionSetup setup;
    setup.out_dir = job.out_dir;
    setup.plan = job.plan;
    setup.base = base;
    setup.force = job.spec.force;
    if (job.resume) {
      LoadedRun loaded = std::move(*job.resume);
      session = std::make_unique<RunSession>(std::move(setup), loaded);
      // The cases already on disk: on screen at once, counted as done.
      for (const CaseResult& r : loaded.cases) m_store.append(key, r);
      std::lock_guard lock(m_mutex);
      m_progress.done = session->cases().size() - session->to_record();
      m_progress.resumed = session->resumed();
    } else {
      session = std::make_unique<RunSession>(std::move(setup));
    }
  } catch (const std::exception& e) {
    message = std::string("cannot start the sweep: ") + e.what();
  }
  if (session) {
    session->add_observer(&observer);
    session->set_stop_check([this] { return m_stop.load(); });
    WorkerSetup setup;
    setup.backend = job.plan.backend;
    setup.protocol = job.spec.protocol;
    setup.debug_kernels = job.plan.debug_kernels;
    setup.plugins = loaded_plugin_paths();
    const std::string exe = job.worker_executable.empty() ? self_executable() : job.worker_executable;
    SupervisorOptions options;
    options.case_timeout_s = job.case_timeout_s;
    options.start_timeout_s = job.start_timeout_s;
    options.poll_interval_s = 0.1;
    SupervisorSummary summary;
    try {
      const cli::WorkerProgram program = cli::worker_program(exe);
      options.slots = make_worker_slots(job.worker_cmds, job.devices,
                                        SpawnSpec{program.argv, {}, program.env}, setup, "worker command");
      session->use_workers(options.slots);
      session->start();
      const JsonWorkerCodec codec;
      summary = supervise(session->cases(), session->pending(), options, codec, *session);
    } catch (const std::exception& e) {
      message = std::string("sweep failed: ") + e.what();
    }
    session->close();
    if (!message.empty()) {
    } else if (!session->fatal().empty()) {
      message = "stopped: " + session->fatal();
    } else if (!session->has_results_file()) {
      message =
          "no worker started" + (summary.errors.empty() ? std::string() : ": " + summary.errors.front());
    } else if (summary.stopped) {
      message = fmt::format("stopped; {} cases not run; results so far in {} (Resume continues them)",
                            summary.not_run.size(), job.out_dir.string());
    } else if (!summary.errors.empty()) {
      message = summary.errors.front();
    }
    if (!session->has_results_file() && !observer.log().empty())
      message += " (worker said: " + observer.log().back() + ")";
  }
  m_store.set_live(key, false);
  std::lock_guard lock(m_mutex);
  m_progress.running = false;
  m_progress.current.clear();
  m_progress.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
  m_progress.message =
      !message.empty()
          ? message
          : fmt::format("done: {} cases in {:.1f} s ({} ok, {} failed, {} skipped)", m_progress.done,
                        m_progress.elapsed_s, m_progress.ok, m_progress.failed, m_progress.skipped);
}

void JobRunner::run_replay(LoadedRun run, double speed) {
  StoredRun stored;
  stored.label = run.run.run_id;
  stored.data.run = run.run;
  stored.live = true;
  stored.origin = "replay";
  const std::uint64_t key = m_store.add(std::move(stored));
  {
    std::lock_guard lock(m_mutex);
    m_progress.store_key = key;
  }
  for (CaseResult& r : run.cases) {
    {
      std::lock_guard lock(m_mutex);
      m_progress.current = r.kernel + " " + config_label(r.problem, r.knobs);
    }
    // The recorded pace: each case takes the wall time it took when measured, sliced so Stop
    // answers within 50 ms.
    const double wait_s = r.status == Status::skipped ? 0.0 : r.wall_s / speed;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    while (!m_stop && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(
          std::min(std::chrono::duration<double>(0.05),
                   std::chrono::duration<double>(until - std::chrono::steady_clock::now())));
    if (m_stop) break;
    {
      std::lock_guard lock(m_mutex);
      ++m_progress.done;
      if (r.status == Status::ok) ++m_progress.ok;
      if (r.status == Status::skipped) ++m_progress.skipped;
      if (failed(r.status)) ++m_progress.failed;
      if (r.clocks) m_progress.clocks = r.clocks;
      if (r.status != Status::skipped && r.wall_s > 0) {
        m_measured_wall_s += r.wall_s / speed;
        ++m_measured;
      }
    }
    m_store.append(key, std::move(r));
  }
  m_store.set_live(key, false);
  std::lock_guard lock(m_mutex);
  m_progress.running = false;
  m_progress.current.clear();
  m_progress.message =
      m_stop ? fmt::format("replay stopped after {} of {} cases", m_progress.done, m_progress.total)
             : fmt::format("replay done: {} cases", m_progress.done);
}

}  // namespace attn::gui
