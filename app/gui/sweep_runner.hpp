// Work that feeds the result store from a background thread, so the UI never blocks: a sweep run
// by worker processes (local, or started by commands such as ssh) under the supervisor, through a
// RunSession that owns the run directory as `attnscope run` does (a faulting kernel costs one
// case, never the GUI); a resumed sweep; or the replay of a saved run at its recorded pace.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/gui/result_store.hpp"
#include "profiling/result.hpp"
#include "profiling/sweep/sweep_spec.hpp"
#include "reports/plan_store.hpp"
#include "reports/run_session.hpp"

namespace attn::gui {

// What the run bar shows; copied out under the runner's own lock.
struct JobProgress {
  bool running = false;
  std::string kind;       // "sweep" | "replay" | "" (nothing yet)
  std::size_t total = 0;  // cases planned
  std::size_t done = 0;   // cases finished (skips included)
  std::size_t ok = 0, failed = 0, skipped = 0;
  double elapsed_s = 0;          // [s] since start
  std::optional<double> eta_s;   // [s] estimated from the mean time of the measured cases
  std::string current;           // the case being measured: "cpu.flash 1x4x128x64 fp32"
  std::string device;            // "NVIDIA H100 80GB HBM3" or the CPU model
  std::string backend;           // "cuda" | "cpu"
  std::optional<Clocks> clocks;  // of the latest finished case
  std::string message;           // the last thing worth saying: an error, "stopped", "done in 12 s"
  std::filesystem::path out_file;
  std::uint64_t store_key = 0;
  std::vector<WorkerStatus> workers;  // of a sweep: one per slot
  std::size_t resumed = 0;            // cases a resumed sweep found finished
};

struct SweepJob {
  SweepSpec spec;                        // protocol, baseline, name, force
  PlanFile plan;                         // the cases (of this shard), as plan.jsonl stores them
  std::filesystem::path out_dir;         // plan.jsonl, results.jsonl, results.csv and workers.log go here
  std::string command_line;              // the equivalent `attnscope run` command, for the run record
  std::string worker_executable;         // runs `<exe> worker`; empty = this process's executable
  std::vector<std::string> worker_cmds;  // shell commands that run a worker; "" = worker_executable
  std::vector<int> devices{0};           // each command x each device is one worker
  double case_timeout_s = 600;           // [s]
  double start_timeout_s = 60;           // [s] the workers' handshake
  std::optional<LoadedRun> resume;       // out_dir/results.jsonl of a resumed sweep
};
class JobRunner {
 public:
  explicit JobRunner(ResultStore& store) : m_store(store) {}
  ~JobRunner();
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Start a sweep or a replay on the background thread; false (and message set) when one is running.
  bool start_sweep(SweepJob job);
  bool start_replay(LoadedRun run, std::filesystem::path source, double speed);
  // Asks the job to stop: workers are killed, finished cases stay in the store and on disk.
  void stop();
  bool running() const;
  JobProgress progress() const;

 private:
  void run_sweep(SweepJob job);
  void run_replay(LoadedRun run, double speed);
  bool begin(const std::string& kind, std::size_t total);
  void join_finished();
  friend class SweepObserver;

  ResultStore& m_store;
  std::thread m_thread;
  std::atomic<bool> m_stop{false};
  mutable std::mutex m_mutex;
  JobProgress m_progress;
  std::chrono::steady_clock::time_point m_started;
  double m_measured_wall_s = 0;  // [s] summed wall time of measured (not skipped) cases
  std::size_t m_measured = 0;
};

}  // namespace attn::gui
