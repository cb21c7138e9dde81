// The supervisor loop: spawn workers, hand out cases, poll() their stdout/stderr, enforce the
// per-case deadline, record a dead or killed worker's case, restart, and go on (supervisor.hpp).
#include "profiling/worker/supervisor.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <optional>

#include "profiling/engine/engine.hpp"
#include "profiling/worker/pipe_io.hpp"

namespace attn {

namespace {

constexpr std::size_t kStderrTail = 8;  // worker stderr lines kept for a fault's reason
constexpr double kExitGrace_s = 5.0;    // [s] a worker gets to exit after its stdin closes

enum class SlotState { down, starting, ready, busy };

struct Slot {
  std::optional<ChildProcess> proc;
  SlotState state = SlotState::down;
  LineSplitter out, err;
  std::deque<std::string> err_tail;
  std::size_t in_flight = 0;  // valid while busy
  double deadline = 0;        // [s] monotonic: end of start-up or of the case in flight
  double case_start = 0;      // [s] monotonic
  int start_failures = 0;     // consecutive
  std::size_t done_since_start = 0;
  bool given_up = false;
  bool broken = false;          // a write to its stdin failed: wait for its death, hand it nothing
  std::optional<Problem> held;  // the problem of the last case handed to this worker
};

// SIGPIPE ignored while the supervisor writes to workers that may have died.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe() {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &m_previous);
  }
  ~IgnoreSigpipe() { ::sigaction(SIGPIPE, &m_previous, nullptr); }
  IgnoreSigpipe(const IgnoreSigpipe&) = delete;
  IgnoreSigpipe& operator=(const IgnoreSigpipe&) = delete;

 private:
  struct sigaction m_previous {};
};

class Run {
 public:
  Run(const std::vector<Case>& cases, const std::vector<std::size_t>& pending,
      const SupervisorOptions& options, const WorkerCodec& codec, SupervisorEvents& events)
      : m_cases(cases),
        m_pending(pending.begin(), pending.end()),
        m_options(options),
        m_codec(codec),
        m_events(events),
        m_slots(options.slots.size()) {}

  SupervisorSummary run() {
    IgnoreSigpipe guard;
    if (m_slots.empty()) {
      m_summary.errors.push_back("no worker slots");
      finish_not_run();
      return m_summary;
    }
    for (;;) {
      if (m_events.stop_requested()) {
        m_summary.stopped = true;
        break;
      }
      start_workers();
      dispatch();
      if (m_pending.empty() && busy_count() == 0 && (m_any_ready || live_count() == 0)) break;
      if (live_count() == 0) break;  // every slot given up
      wait_and_handle();
      check_deadlines();
    }
    shut_down();
    finish_not_run();
    return m_summary;
  }

 private:
  std::size_t busy_count() const {
    return static_cast<std::size_t>(std::count_if(m_slots.begin(), m_slots.end(),
                                                  [](const Slot& s) { return s.state == SlotState::busy; }));
  }
  std::size_t live_count() const {
    return static_cast<std::size_t>(std::count_if(m_slots.begin(), m_slots.end(), [](const Slot& s) {
      return s.state != SlotState::down || !s.given_up;
    }));
  }

  void log(std::size_t slot, const std::string& line) { m_events.worker_log(slot, line); }

  // Starts workers while cases wait for one; one worker always starts so that its device record
  // describes the run even when nothing is left to do.
  void start_workers() {
    std::size_t available = 0;
    for (const Slot& s : m_slots)
      if (s.state == SlotState::starting || (s.state == SlotState::ready && !s.broken)) ++available;
    for (std::size_t i = 0; i < m_slots.size(); ++i) {
      Slot& s = m_slots[i];
      if (s.state != SlotState::down || s.given_up) continue;
      const bool needed = m_pending.size() > available || (!m_any_ready && available == 0);
      if (!needed) break;
      if (spawn(i)) ++available;
    }
  }

  bool spawn(std::size_t i) {
    Slot& s = m_slots[i];
    const WorkerSlot& w = m_options.slots[i];
    s = Slot{.start_failures = s.start_failures};
    try {
      s.proc.emplace(ChildProcess::spawn(w.launch));
    } catch (const SpawnError& e) {
      start_failed(i, std::string("cannot spawn: ") + e.what());
      m_events.worker_down(i, std::string("cannot spawn: ") + e.what(), s.given_up);
      return false;
    }
    ++m_summary.worker_starts;
    s.state = SlotState::starting;
    s.deadline = monotonic_now() + m_options.start_timeout_s;
    m_events.worker_started(i, s.proc->pid());
    log(i, fmt::format("started {} as pid {}", w.label, s.proc->pid()));
    send(i, m_codec.encode_setup(w.setup));
    return true;
  }

  void start_failed(std::size_t i, const std::string& why, bool give_up = false) {
    Slot& s = m_slots[i];
    ++s.start_failures;
    if (give_up) s.start_failures = std::max(s.start_failures, m_options.max_start_failures);
    log(i, fmt::format("{}: start {} failed: {}", m_options.slots[i].label, s.start_failures, why));
    if (s.start_failures >= m_options.max_start_failures) {
      s.given_up = true;
      m_summary.errors.push_back(give_up ? fmt::format("{}: gave up: {}", m_options.slots[i].label, why)
                                         : fmt::format("{}: gave up after {} failed starts; last: {}",
                                                       m_options.slots[i].label, s.start_failures, why));
    }
  }

  // Writes one protocol line; a closed pipe marks the slot broken (its death is handled on EOF).
  bool send(std::size_t i, const std::string& line) {
    Slot& s = m_slots[i];
    try {
      write_all(s.proc->stdin_fd(), line + "\n", "worker stdin");
      return true;
    } catch (const PipeError& e) {
      s.broken = true;
      log(i, e.what());
      return false;
    }
  }

  // Which pending case slot `i` takes (a position in m_pending). A worker keeps a problem's inputs
  // and reference between cases, so it takes the next case of the problem it holds first; with
  // several slots it then takes the largest problem no other worker holds (longest first, so the
  // sweep does not end on one big case), else the next in plan order.
  std::size_t pick(std::size_t i) const { return pick(i, m_slots[i].held); }
  std::size_t pick(std::size_t i, const std::optional<Problem>& held) const {
    if (m_slots.size() == 1) return 0;  // one worker: plan order (problem-major already)
    if (held)
      for (std::size_t k = 0; k < m_pending.size(); ++k)
        if (m_cases[m_pending[k]].problem == *held) return k;
    auto held_elsewhere = [&](const Problem& p) {
      for (std::size_t j = 0; j < m_slots.size(); ++j)
        if (j != i && m_slots[j].proc && m_slots[j].held && *m_slots[j].held == p) return true;
      return false;
    };
    std::optional<std::size_t> best;
    double best_flops = -1;
    for (std::size_t k = 0; k < m_pending.size(); ++k) {
      const Problem& p = m_cases[m_pending[k]].problem;
      const double f = p.flops();
      if (f > best_flops && !held_elsewhere(p)) best = k, best_flops = f;
    }
    return best.value_or(0);
  }

  // The problem slot `i` is expected to take after the case of `current` it is being handed, when
  // that is another problem (none while cases of `current` are pending): the worker's hint to set
  // up for it early (CaseEngine::expect_next).
  std::optional<Problem> next_problem_hint(std::size_t i, const Problem& current) const {
    if (m_pending.empty()) return std::nullopt;
    const Problem& next = m_cases[m_pending[pick(i, current)]].problem;
    if (next == current) return std::nullopt;
    return next;
  }

  void dispatch() {
    for (std::size_t i = 0; i < m_slots.size() && !m_pending.empty(); ++i) {
      Slot& s = m_slots[i];
      if (s.state != SlotState::ready || s.broken) continue;
      const std::size_t at = pick(i);
      const std::size_t index = m_pending[at];
      m_pending.erase(m_pending.begin() + static_cast<std::ptrdiff_t>(at));
      if (!send(i, m_codec.encode_case(m_cases[index], next_problem_hint(i, m_cases[index].problem)))) {
        m_pending.push_front(index);  // never reached the worker: another one takes it
        continue;
      }
      s.held = m_cases[index].problem;
      s.state = SlotState::busy;
      s.in_flight = index;
      s.case_start = monotonic_now();
      s.deadline = s.case_start + m_options.case_timeout_s;
      m_events.case_started(index, i);
    }
  }

  void wait_and_handle() {
    std::vector<pollfd> fds;
    std::vector<std::pair<std::size_t, bool>> owner;  // slot, is stdout
    double wait_s = m_options.poll_interval_s;
    const double now = monotonic_now();
    for (std::size_t i = 0; i < m_slots.size(); ++i) {
      const Slot& s = m_slots[i];
      if (!s.proc) continue;
      if (s.proc->stdout_fd() >= 0) {
        fds.push_back({s.proc->stdout_fd(), POLLIN, 0});
        owner.emplace_back(i, true);
      }
      if (s.proc->stderr_fd() >= 0) {
        fds.push_back({s.proc->stderr_fd(), POLLIN, 0});
        owner.emplace_back(i, false);
      }
      if (s.state == SlotState::starting || s.state == SlotState::busy)
        wait_s = std::min(wait_s, s.deadline - now);
    }
    const int timeout_ms = static_cast<int>(std::ceil(std::max(0.0, wait_s) * 1000.0));
    const int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n <= 0) return;  // time-out, or EINTR from a signal (stop_requested() is asked next)
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const auto [i, is_out] = owner[k];
      if (!m_slots[i].proc) continue;  // handled as dead earlier in this round
      if (is_out)
        read_stdout(i);
      else
        read_stderr(i);
    }
  }

  void read_stderr(std::size_t i) {
    Slot& s = m_slots[i];
    bool open = true;
    try {
      open = read_some(s.proc->stderr_fd(), s.err, "worker stderr");
    } catch (const PipeError&) {
      open = false;
    }
    drain_stderr_lines(i);
    if (!open) {
      if (std::string rest = s.err.take_rest(); !rest.empty()) keep_stderr(i, rest);
      s.proc->close_stderr();
    }
  }

  void drain_stderr_lines(std::size_t i) {
    while (auto line = m_slots[i].err.next()) keep_stderr(i, *line);
  }

  void keep_stderr(std::size_t i, const std::string& line) {
    Slot& s = m_slots[i];
    s.err_tail.push_back(line);
    if (s.err_tail.size() > kStderrTail) s.err_tail.pop_front();
    log(i, line);
  }

  void read_stdout(std::size_t i) {
    Slot& s = m_slots[i];
    bool open = true;
    try {
      open = read_some(s.proc->stdout_fd(), s.out, "worker stdout");
    } catch (const PipeError&) {
      open = false;
    }
    while (s.proc) {
      std::optional<std::string> line = s.out.next();
      if (!line) break;
      handle_line(i, *line);
    }
    if (!open && s.proc) worker_died(i);
  }

  void handle_line(std::size_t i, const std::string& line) {
    Slot& s = m_slots[i];
    if (line.find_first_not_of(" \t\r") == std::string::npos) return;
    if (s.state == SlotState::starting) {
      try {
        const RunInfo device = m_codec.decode_device(line);
        s.state = SlotState::ready;
        s.start_failures = 0;
        m_any_ready = true;
        m_events.worker_ready(i, device);
      } catch (const std::exception& e) {
        handshake_garbage(i, line, e.what());
      }
      return;
    }
    if (s.state != SlotState::busy) {
      log(i, "output while no case was in flight, ignored: " + line.substr(0, 200));
      return;
    }
    CaseResult r;
    try {
      r = m_codec.decode_result(line);
    } catch (const std::exception& e) {
      log(i, std::string("not a result record, ignored: ") + e.what());
      return;
    }
    const Case& c = m_cases[s.in_flight];
    if (r.case_id != c.case_id) {
      log(i, "result for case " + r.case_id + " while " + c.case_id + " was in flight, ignored");
      return;
    }
    s.state = SlotState::ready;
    ++s.done_since_start;
    finished(s.in_flight, std::move(r));
  }

  void finished(std::size_t index, CaseResult r) {
    ++m_summary.finished;
    m_events.case_finished(index, std::move(r));
  }

  // The record of a case whose worker did not answer: same identity fields as an engine result.
  CaseResult supervisor_record(std::size_t index, Status status, std::string reason, double wall_s) const {
    const Case& c = m_cases[index];
    CaseResult r = case_record(c, status, std::move(reason));
    fill_derived(r, false);
    r.wall_s = wall_s;
    return r;
  }

  std::string stderr_tail(const Slot& s) const {
    std::string tail;
    for (const std::string& line : s.err_tail) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      tail += tail.empty() ? "" : " | ";
      tail += line;
    }
    return tail.empty() ? std::string() : "; its stderr ended: " + tail;
  }

  // The first stdout line of a starting worker is not a device record: the command does not run
  // `attnscope worker` (a login banner, a wrong program, another version). Waiting cannot help.
  void handshake_garbage(std::size_t i, const std::string& line, const std::string& why) {
    Slot& s = m_slots[i];
    s.proc->kill_group();
    s.proc->finish(0.0);
    collect_stderr(i);
    const std::string shown = line.size() > 200 ? line.substr(0, 200) + "..." : line;
    start_failed(i,
                 fmt::format("the handshake failed: the worker's first line on stdout is not a device record "
                             "({}); it printed '{}'{}; the command must run `attnscope worker`",
                             why, shown, stderr_tail(s)),
                 true);
    mark_down(i, "handshake failed");
  }

  void mark_down(std::size_t i, const std::string& how) {
    Slot& s = m_slots[i];
    s.proc.reset();
    s.state = SlotState::down;
    s.broken = false;
    m_events.worker_down(i, how, s.given_up);
  }

  // Reaps the worker (its stdout closed), collects its last words, and records the case it held.
  void worker_died(std::size_t i) {
    Slot& s = m_slots[i];
    s.proc->close_stdin();
    s.proc->finish(kExitGrace_s);
    collect_stderr(i);
    std::string how = s.proc->term_signal() ? "was " : "";
    how += s.proc->exit_description();
    log(i, fmt::format("{} (pid {}) {}", m_options.slots[i].label, s.proc->pid(), how));
    if (s.state == SlotState::busy && s.proc->exit_code() == kWorkerExitContextLost) {
      // The worker sent the result of the case that lost its device context, then left without
      // reading more: the case handed out in between never ran there. A fresh worker takes it.
      log(i, fmt::format("case {} was handed out as the worker left; the next worker takes it",
                         m_cases[s.in_flight].case_id));
      m_pending.push_front(s.in_flight);
    } else if (s.state == SlotState::busy) {
      // A worker that rejected its input (exit 2) says so; anything else mid-case is a fault.
      const bool bad_input = s.proc->exit_code() == kWorkerExitBadInput;
      const Status st = bad_input ? Status::error : Status::fault;
      if (st == Status::fault) ++m_summary.faults;
      finished(s.in_flight,
               supervisor_record(s.in_flight, st,
                                 fmt::format("the worker {} while running this case{}", how, stderr_tail(s)),
                                 monotonic_now() - s.case_start));
      s.start_failures = 0;
    } else if (s.state == SlotState::starting || s.done_since_start == 0) {
      start_failed(i, how + stderr_tail(s));
    }
    mark_down(i, how);
  }

  void collect_stderr(std::size_t i) {
    Slot& s = m_slots[i];
    while (s.proc->stderr_fd() >= 0) {
      bool open = false;
      try {
        open = read_some(s.proc->stderr_fd(), s.err, "worker stderr");
      } catch (const PipeError&) {
      }
      drain_stderr_lines(i);
      // The child has been reaped: a descendant still holding stderr open must not stall us.
      pollfd p{s.proc->stderr_fd(), POLLIN, 0};
      if (!open || ::poll(&p, 1, 0) <= 0) break;
    }
    if (std::string rest = s.err.take_rest(); !rest.empty()) keep_stderr(i, rest);
  }

  void check_deadlines() {
    const double now = monotonic_now();
    for (std::size_t i = 0; i < m_slots.size(); ++i) {
      Slot& s = m_slots[i];
      if (!s.proc || now < s.deadline) continue;
      if (s.state == SlotState::busy) {
        s.proc->kill_group();
        s.proc->finish(kExitGrace_s);
        collect_stderr(i);
        ++m_summary.timeouts;
        log(i,
            fmt::format("{} (pid {}): case {} passed the {:g} s time-out; killed", m_options.slots[i].label,
                        s.proc->pid(), m_cases[s.in_flight].case_id, m_options.case_timeout_s));
        finished(s.in_flight,
                 supervisor_record(
                     s.in_flight, Status::timeout,
                     fmt::format("no result within --case-timeout {:g} s; the worker (pid {}) was killed",
                                 m_options.case_timeout_s, s.proc->pid()),
                     now - s.case_start));
        s.start_failures = 0;
        mark_down(i, "killed after the case time-out");
      } else if (s.state == SlotState::starting) {
        s.proc->kill_group();
        s.proc->finish(kExitGrace_s);
        collect_stderr(i);
        const std::string rest = s.out.take_rest();
        const std::string printed =
            rest.empty()
                ? std::string("it printed nothing on stdout")
                : fmt::format("it printed '{}' on stdout without ending the line", rest.substr(0, 200));
        start_failed(i, fmt::format("no device record within the {:g} s handshake time-out "
                                    "(--worker-start-timeout); {}{}",
                                    m_options.start_timeout_s, printed, stderr_tail(s)));
        mark_down(i, "no handshake");
      }
    }
  }

  void shut_down() {
    for (std::size_t i = 0; i < m_slots.size(); ++i) {
      Slot& s = m_slots[i];
      if (!s.proc) continue;
      if (m_summary.stopped) {
        if (s.state == SlotState::busy) m_pending.push_front(s.in_flight);
        s.proc->kill_group();
      }
      s.proc->close_stdin();  // a worker ends at end of input
      s.proc->finish(m_summary.stopped ? 0.0 : kExitGrace_s);
      collect_stderr(i);
      const std::string how = m_summary.stopped ? std::string("stopped") : s.proc->exit_description();
      if (!m_summary.stopped)
        log(i, fmt::format("{} (pid {}) {}", m_options.slots[i].label, s.proc->pid(), how));
      mark_down(i, how);
    }
  }

  void finish_not_run() {
    m_summary.not_run.assign(m_pending.begin(), m_pending.end());
    std::sort(m_summary.not_run.begin(), m_summary.not_run.end());
  }

  const std::vector<Case>& m_cases;
  std::deque<std::size_t> m_pending;
  const SupervisorOptions& m_options;
  const WorkerCodec& m_codec;
  SupervisorEvents& m_events;
  std::vector<Slot> m_slots;
  bool m_any_ready = false;
  SupervisorSummary m_summary;
};

}  // namespace

SupervisorSummary supervise(const std::vector<Case>& cases, const std::vector<std::size_t>& pending,
                            const SupervisorOptions& options, const WorkerCodec& codec,
                            SupervisorEvents& events) {
  return Run(cases, pending, options, codec, events).run();
}

}  // namespace attn
