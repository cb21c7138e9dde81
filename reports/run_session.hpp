// One run directory from start to end, for every front-end: plan.jsonl written before any worker
// starts, results.jsonl opened with the first device record (run record first, then one fsynced
// line per case), planned-skip records, resume, workers.log, results.csv at the end, and the state
// of every worker. UI-free: the CLI's progress bar and the GUI's result store are observers.
#pragma once
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiling/worker/supervisor.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plan_store.hpp"

namespace attn {

// What one worker slot is doing, for a front-end to show.
struct WorkerStatus {
  enum class State { waiting, starting, ready, busy, down, given_up };
  State state = State::waiting;
  std::string label;   // "w1 (device 0 via 'ssh gpu7 attnscope worker')"
  std::string device;  // the GPU's name or the CPU model, once its device record arrived
  std::string host;    // where the worker runs (its device record's host)
  int pid = 0;         // of the process this supervisor started (a shell, for a command)
  std::size_t cases_done = 0;
  std::string last;  // the last thing said about it: "exited with code 0", why it was given up
};
std::string_view to_string(WorkerStatus::State s);

// Callbacks on the thread that drives the session (the supervisor's), in the order things happen.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // results.jsonl is open with `run` as its first line (for a resume: the stored run record).
  virtual void run_opened(const RunInfo& /*run*/, const std::filesystem::path& /*results_file*/) {}
  virtual void case_started(std::size_t /*index*/, const Case& /*c*/) {}
  // A finished case, after its line is on disk (unless fatal() says the disk failed).
  virtual void case_recorded(std::size_t /*index*/, const CaseResult& /*r*/) {}
  virtual void worker_changed(std::size_t /*slot*/, const WorkerStatus& /*w*/) {}
  virtual void worker_log(std::size_t /*slot*/, const std::string& /*line*/) {}
  // Something worth telling the user that is not an error: "worker 1 runs on another GPU".
  virtual void notice(const std::string& /*text*/) {}
};

struct SessionSetup {
  std::filesystem::path out_dir;
  PlanFile plan;
  // The run's identity: run_id, started_at, version, git_commit, command_line, protocol, baseline.
  // The first worker's device record supplies the rest (host, gpu, driver, libraries).
  RunInfo base;
  bool force = false;  // overwrite an existing results.jsonl
};

// The files of an existing run directory, for --resume: its plan and its results.
struct StoredRunDir {
  PlanFile plan;
  LoadedRun loaded;
};
// Throws ResultsIoError / ResultsFormatError naming the file (and its line).
StoredRunDir read_run_dir(const std::filesystem::path& dir);

class RunSession final : public SupervisorEvents {
 public:
  // A fresh run: creates out_dir and writes plan.jsonl now, before any worker starts, so even a
  // run whose workers never answer leaves its plan behind. Throws ResultsIoError.
  explicit RunSession(SessionSetup setup);
  // A resumed run: `loaded` is out_dir/results.jsonl as read; the file is reopened for appending (a
  // torn last line cut off) and its finished cases of this plan are not run again; lines of cases
  // outside the plan are kept, never rerun. Throws ResultsIoError / ResultsFormatError.
  RunSession(SessionSetup setup, LoadedRun loaded);
  ~RunSession() override;
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  void add_observer(RunObserver* o) { m_observers.push_back(o); }
  // Asked between supervisor events (with fatal()): true stops the run.
  void set_stop_check(std::function<bool()> check) { m_stop_check = std::move(check); }

  const SessionSetup& setup() const { return m_setup; }
  const std::vector<Case>& cases() const { return m_setup.plan.cases; }
  bool finished(std::size_t i) const { return m_results[i].has_value(); }
  std::size_t resumed() const { return m_resumed; }
  std::size_t skipped_at_plan() const;
  // Cases still to measure (planned skips excluded), in plan order.
  std::vector<std::size_t> pending() const;
  // Cases still to record: pending plus planned skips not yet written.
  std::size_t to_record() const;
  std::size_t recorded() const { return m_recorded; }
  bool has_results_file() const { return m_writer.has_value(); }
  std::filesystem::path results_file() const { return m_setup.out_dir / "results.jsonl"; }
  const RunInfo& run_info() const { return m_run; }
  const std::string& fatal() const { return m_fatal; }
  void fail(std::string why);

  // Worker slots of a supervised run: their labels, and workers.log in the run directory
  // (appended to on resume). Call before supervise().
  void use_workers(const std::vector<WorkerSlot>& slots);
  const std::vector<WorkerStatus>& workers() const { return m_workers; }

  // Once the observers are attached: a resumed run records the planned skips it has not written.
  void start();
  // In-process runs: opens results.jsonl with `run` (a no-op once open) and records planned skips.
  void open(const RunInfo& run);

  // SupervisorEvents: the in-process loop calls case_started/case_finished the same way.
  void worker_started(std::size_t slot, pid_t pid) override;
  void worker_ready(std::size_t slot, const RunInfo& device) override;
  void case_started(std::size_t index, std::size_t slot) override;
  void case_finished(std::size_t index, CaseResult result) override;
  void worker_down(std::size_t slot, const std::string& how, bool given_up) override;
  void worker_log(std::size_t slot, const std::string& line) override;
  bool stop_requested() override;

  // Closes results.jsonl and workers.log and writes results.csv (when results.jsonl was opened);
  // returns every result, in plan order, then the lines of cases outside the plan. A failure lands
  // in fatal(). Idempotent.
  std::vector<CaseResult> close();

 private:
  // Per slot: what the session knows to stamp a case's place and to total its time.
  struct SlotClock {
    WorkerSlot slot;                // label and setup (device index)
    std::optional<RunInfo> device;  // the running worker's device record
    int pid = 0, starts = 0;
    double spawned_at = 0;  // [s] monotonic, while starting
    double busy_s = 0, starting_s = 0;
  };
  void record(std::size_t index, CaseResult r);
  void stamp_place(CaseResult& r, std::optional<std::size_t> slot) const;
  void note_device(const RunInfo& device, int index, const std::string& worker);
  void finish_run_record();
  void record_planned_skips();
  void changed(std::size_t slot);

  SessionSetup m_setup;
  std::vector<std::optional<CaseResult>> m_results;
  std::vector<CaseResult> m_foreign;
  std::map<std::string, std::size_t> m_index;
  struct InFlight {
    std::size_t slot;
    double started_at;  // [s] monotonic hand-out
  };
  std::map<std::size_t, InFlight> m_in_flight;  // case index -> where and since when it runs
  std::vector<SlotClock> m_clocks;              // one per worker slot
  std::optional<double> m_t0;                   // [s] monotonic: the session's first event
  RunTotals m_totals;
  double m_in_process_busy_s = 0;        // [s] cases run in this process
  std::vector<RunDevice> m_new_devices;  // devices seen in this session, in order
  std::optional<JsonlWriter> m_writer;
  RunInfo m_run;
  std::vector<RunObserver*> m_observers;
  std::function<bool()> m_stop_check;
  std::vector<WorkerStatus> m_workers;
  std::FILE* m_log = nullptr;
  bool m_resume = false;
  bool m_closed = false;
  bool m_warned_device = false;
  std::size_t m_recorded = 0, m_resumed = 0;
  std::string m_fatal;
  std::vector<CaseResult> m_closed_results;
};

}  // namespace attn
