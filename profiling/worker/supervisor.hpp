// The supervisor: runs planned cases through worker processes so that a kernel that faults,
// hangs or kills its process costs one case, never the run. One worker per slot (a GPU, or a
// command that reaches one elsewhere); cases are handed out as workers free up.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "profiling/result.hpp"
#include "profiling/sweep/sweep_spec.hpp"
#include "profiling/worker/protocol.hpp"
#include "profiling/worker/subprocess.hpp"

namespace attn {

struct WorkerSlot {
  SpawnSpec launch;   // `attnscope worker`, or a shell command that runs one (ssh, srun)
  WorkerSetup setup;  // sent as the first stdin line
  std::string label;  // names the slot in logs and messages, e.g. "w1 (device 2)"
};

struct SupervisorOptions {
  std::vector<WorkerSlot> slots;
  double case_timeout_s = 600;  // [s] from handing a case out to its result; then `timeout`
  // [s] from spawning a worker to its device record (the handshake). A worker that prints anything
  // but a device record on stdout first fails its start at once: no retry cures a wrong command.
  double start_timeout_s = 60;
  int max_start_failures = 3;    // consecutive failed starts after which a slot is given up
  double poll_interval_s = 0.2;  // [s] how often stop_requested() is asked while waiting
};

// Callbacks, all on the thread that called supervise(), in the order things happen.
class SupervisorEvents {
 public:
  virtual ~SupervisorEvents() = default;
  virtual void worker_started(std::size_t /*slot*/, pid_t /*pid*/) {}
  // The worker's device record arrived: it is ready for cases.
  virtual void worker_ready(std::size_t /*slot*/, const RunInfo& /*device*/) {}
  // A case was handed to a worker. It can start again on another worker without finishing first
  // when its worker left before reading it (exit kWorkerExitContextLost right after a result).
  virtual void case_started(std::size_t /*index*/, std::size_t /*slot*/) {}
  // Exactly once per finished case (index into `cases`): the worker's result, or the record the
  // supervisor makes for a case whose worker died (`fault`) or ran past the time-out (`timeout`).
  virtual void case_finished(std::size_t index, CaseResult result) = 0;
  // The slot's worker is gone (`how`: "exited with code 0", why its start failed...); `given_up`
  // when the slot will not be started again.
  virtual void worker_down(std::size_t /*slot*/, const std::string& /*how*/, bool /*given_up*/) {}
  // A line a worker wrote on stderr, or a line the supervisor says about a worker.
  virtual void worker_log(std::size_t /*slot*/, const std::string& /*line*/) {}
  // Polled between events: true stops the run (workers are killed, in-flight cases not recorded).
  virtual bool stop_requested() { return false; }
};

struct SupervisorSummary {
  std::size_t finished = 0;
  std::size_t faults = 0;    // cases recorded as `fault` because their worker died
  std::size_t timeouts = 0;  // cases recorded as `timeout`
  std::size_t worker_starts = 0;
  bool stopped = false;              // stop_requested() ended the run
  std::vector<std::size_t> not_run;  // indices never finished (stopped, or no worker could start)
  std::vector<std::string> errors;   // why slots were given up
};

// Runs cases[i] for every i in `pending`. One slot takes them in `pending` order. With several, a
// worker first takes the next pending case of the problem it last ran (its inputs and reference
// are cached there), else the largest problem (FLOPs) no other worker holds, so workers do not
// compute one problem's reference twice and the sweep ends on small cases.
// Never throws for what a worker does: a worker that cannot be spawned or started counts against
// its slot's max_start_failures.
SupervisorSummary supervise(const std::vector<Case>& cases, const std::vector<std::size_t>& pending,
                            const SupervisorOptions& options, const WorkerCodec& codec,
                            SupervisorEvents& events);

}  // namespace attn
