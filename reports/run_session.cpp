// RunSession: the run directory's files and the workers' states, driven by supervisor events (or
// by the in-process loop through the same calls), reported to observers.
#include "reports/run_session.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "profiling/engine/engine.hpp"
#include "profiling/engine/sampler.hpp"
#include "reports/csv_writer.hpp"

namespace attn {

namespace fs = std::filesystem;

std::string_view to_string(WorkerStatus::State s) {
  switch (s) {
    case WorkerStatus::State::waiting:
      return "waiting";
    case WorkerStatus::State::starting:
      return "starting";
    case WorkerStatus::State::ready:
      return "ready";
    case WorkerStatus::State::busy:
      return "busy";
    case WorkerStatus::State::down:
      return "down";
    case WorkerStatus::State::given_up:
      return "given up";
  }
  return "?";
}

StoredRunDir read_run_dir(const fs::path& dir) {
  StoredRunDir d;
  d.loaded = read_results(dir / "results.jsonl");
  d.plan = read_plan(dir / "plan.jsonl");
  return d;
}

namespace {

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
  run.plugins = base.plugins;
  return run;
}

std::string device_name(const RunInfo& run) {
  if (run.gpu && !run.gpu->name.empty()) return run.gpu->name;
  return run.cpu_model.empty() ? run.backend : run.cpu_model;
}

}  // namespace

RunSession::RunSession(SessionSetup setup) : m_setup(std::move(setup)), m_results(m_setup.plan.cases.size()) {
  for (std::size_t i = 0; i < m_setup.plan.cases.size(); ++i) m_index[m_setup.plan.cases[i].case_id] = i;
  std::error_code ec;
  fs::create_directories(m_setup.out_dir, ec);
  if (ec) throw ResultsIoError(m_setup.out_dir.string() + ": cannot create directory: " + ec.message());
  write_plan(m_setup.out_dir / "plan.jsonl", m_setup.plan);
}

RunSession::RunSession(SessionSetup setup, LoadedRun loaded)
    : m_setup(std::move(setup)), m_results(m_setup.plan.cases.size()), m_resume(true) {
  for (std::size_t i = 0; i < m_setup.plan.cases.size(); ++i) m_index[m_setup.plan.cases[i].case_id] = i;
  m_writer.emplace(JsonlWriter::resume(results_file(), loaded));
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

RunSession::~RunSession() {
  if (m_log) std::fclose(m_log);
}

std::size_t RunSession::skipped_at_plan() const {
  std::size_t n = 0;
  for (const Case& c : cases()) n += c.skip_reason.empty() ? 0 : 1;
  return n;
}

std::vector<std::size_t> RunSession::pending() const {
  std::vector<std::size_t> p;
  for (std::size_t i = 0; i < cases().size(); ++i)
    if (!finished(i) && cases()[i].skip_reason.empty()) p.push_back(i);
  return p;
}

std::size_t RunSession::to_record() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < cases().size(); ++i) n += finished(i) ? 0 : 1;
  return n;
}

void RunSession::fail(std::string why) {
  if (m_fatal.empty()) m_fatal = std::move(why);
}

void RunSession::use_workers(const std::vector<WorkerSlot>& slots) {
  if (!m_t0) m_t0 = monotonic_seconds();
  m_clocks.assign(slots.size(), SlotClock{});
  for (std::size_t i = 0; i < slots.size(); ++i) m_clocks[i].slot = slots[i];
  m_workers.assign(slots.size(), WorkerStatus{});
  for (std::size_t i = 0; i < slots.size(); ++i) m_workers[i].label = slots[i].label;
  if (!m_log) m_log = std::fopen((m_setup.out_dir / "workers.log").c_str(), m_resume ? "a" : "w");
  for (std::size_t i = 0; i < slots.size(); ++i) changed(i);
}

void RunSession::changed(std::size_t slot) {
  if (slot >= m_workers.size()) return;
  for (RunObserver* o : m_observers) o->worker_changed(slot, m_workers[slot]);
}

void RunSession::start() {
  if (m_writer) record_planned_skips();
}

void RunSession::open(const RunInfo& run) {
  if (!m_t0) m_t0 = monotonic_seconds();
  if (m_clocks.empty()) note_device(run, 0, "in-process");
  if (m_writer) return;
  try {
    m_writer.emplace(JsonlWriter::create(results_file(), run, m_setup.force));
    m_run = run;
  } catch (const std::exception& e) {
    fail(e.what());
    return;
  }
  for (RunObserver* o : m_observers) o->run_opened(m_run, results_file());
  record_planned_skips();
}

// Plan-time skips are finished cases too: recorded as soon as the file is open.
void RunSession::record_planned_skips() {
  for (std::size_t i = 0; i < cases().size() && m_fatal.empty(); ++i) {
    const Case& c = cases()[i];
    if (c.skip_reason.empty() || finished(i)) continue;
    for (RunObserver* o : m_observers) o->case_started(i, c);
    record(i, planned_skip_record(c));
  }
}

void RunSession::worker_started(std::size_t slot, pid_t pid) {
  if (slot < m_clocks.size()) {
    SlotClock& c = m_clocks[slot];
    ++c.starts;
    c.pid = static_cast<int>(pid);
    c.spawned_at = monotonic_seconds();
    c.device.reset();
  }
  if (slot >= m_workers.size()) return;
  m_workers[slot].state = WorkerStatus::State::starting;
  m_workers[slot].pid = static_cast<int>(pid);
  m_workers[slot].last = fmt::format("started as pid {}", pid);
  changed(slot);
}

void RunSession::worker_ready(std::size_t slot, const RunInfo& device) {
  if (slot < m_clocks.size()) {
    SlotClock& c = m_clocks[slot];
    const double dt = monotonic_seconds() - c.spawned_at;
    c.starting_s += dt;
    m_totals.worker_start_s += dt;
    c.device = device;
    note_device(device, c.slot.setup.device, c.slot.label);
  }
  if (slot < m_workers.size()) {
    WorkerStatus& w = m_workers[slot];
    w.state = WorkerStatus::State::ready;
    w.device = device_name(device);
    w.host = device.host;
    w.last = "ready";
    changed(slot);
  }
  if (!m_writer) {
    open(run_info_from_device(device, m_setup.base));
    return;
  }
  if (m_run.gpu && device.gpu && m_run.gpu->name != device.gpu->name && !m_warned_device) {
    m_warned_device = true;
    const std::string text =
        fmt::format("this run started on {}; worker {} runs on {}", m_run.gpu->name, slot, device.gpu->name);
    for (RunObserver* o : m_observers) o->notice(text);
  }
}

void RunSession::case_started(std::size_t index, std::size_t slot) {
  m_in_flight[index] = {slot, monotonic_seconds()};
  if (slot < m_workers.size()) {
    m_workers[slot].state = WorkerStatus::State::busy;
    changed(slot);
  }
  for (RunObserver* o : m_observers) o->case_started(index, cases()[index]);
}

void RunSession::case_finished(std::size_t index, CaseResult result) {
  std::optional<std::size_t> slot_of;
  if (const auto it = m_in_flight.find(index); it != m_in_flight.end()) {
    const auto [slot, started_at] = it->second;
    m_in_flight.erase(it);
    slot_of = slot;
    const double dt = monotonic_seconds() - started_at;
    m_totals.handoff_s += std::max(0.0, dt - result.wall_s);
    if (slot < m_clocks.size())
      m_clocks[slot].busy_s += dt;
    else if (m_clocks.empty())
      m_in_process_busy_s += dt;
    if (slot < m_workers.size()) {
      WorkerStatus& w = m_workers[slot];
      ++w.cases_done;
      if (w.state == WorkerStatus::State::busy) w.state = WorkerStatus::State::ready;
      changed(slot);
    }
  }
  if (result.phases) {
    ++m_totals.cases;
    m_totals.case_wall_s += result.wall_s;
    add_phases(m_totals.phases, *result.phases);
  }
  stamp_place(result, slot_of);
  record(index, std::move(result));
}

// Where the case ran, from the session's view of its slot: the engine knows neither its slot nor
// the device index the supervisor gave it; the host and device come from the worker's device record.
void RunSession::stamp_place(CaseResult& r, std::optional<std::size_t> slot) const {
  CasePlace& place = r.place ? *r.place : r.place.emplace();
  if (!m_clocks.empty() && slot && *slot < m_clocks.size()) {
    const SlotClock& c = m_clocks[*slot];
    place.worker = c.slot.label;
    place.worker_slot = static_cast<int>(*slot);
    place.worker_pid = c.pid;
    place.worker_start = c.starts;
    place.device_index = c.slot.setup.device;
    if (c.device) {
      place.host = c.device->host;
      place.device_name = device_name(*c.device);
      if (c.device->gpu) place.device_uuid = c.device->gpu->uuid;
    }
    return;
  }
  // In-process: this process and the run's device.
  place.worker = "in-process";
  place.worker_pid = static_cast<int>(::getpid());
  place.device_index = 0;
  place.host = m_run.host;
  place.device_name = device_name(m_run);
  if (m_run.gpu) place.device_uuid = m_run.gpu->uuid;
}

void RunSession::note_device(const RunInfo& device, int index, const std::string& worker) {
  RunDevice d;
  d.host = device.host;
  d.index = index;
  d.uuid = device.gpu ? device.gpu->uuid : std::string();
  d.name = device_name(device);
  d.worker = worker;
  d.peaks = device.peaks;
  add_device(m_new_devices, d);
}

// The run record as the run ends: every device that took part, and the time totals (a resumed run
// adds this session's to the stored ones).
void RunSession::finish_run_record() {
  RunTotals t = m_totals;
  t.wall_s = m_t0 ? monotonic_seconds() - *m_t0 : 0.0;
  t.slots = m_clocks.empty() ? 1 : static_cast<int>(m_clocks.size());
  if (m_clocks.empty()) {
    t.idle_s = std::max(0.0, t.wall_s - m_in_process_busy_s);
  } else {
    t.idle_s = 0;
    for (const SlotClock& c : m_clocks) t.idle_s += std::max(0.0, t.wall_s - c.busy_s - c.starting_s);
  }
  if (m_run.totals) add_totals(t, *m_run.totals, false);
  m_run.totals = t;
  for (const RunDevice& d : m_new_devices) add_device(m_run.devices, d);
}

void RunSession::worker_down(std::size_t slot, const std::string& how, bool given_up) {
  if (slot >= m_workers.size()) return;
  m_workers[slot].state = given_up ? WorkerStatus::State::given_up : WorkerStatus::State::down;
  m_workers[slot].last = how;
  changed(slot);
}

void RunSession::worker_log(std::size_t slot, const std::string& line) {
  if (m_log) {
    std::fprintf(m_log, "%s [w%zu] %s\n", utc_now("%H:%M:%S").c_str(), slot, line.c_str());
    std::fflush(m_log);
  }
  for (RunObserver* o : m_observers) o->worker_log(slot, line);
}

bool RunSession::stop_requested() { return !m_fatal.empty() || (m_stop_check && m_stop_check()); }

// Appends the line (write + fsync) and keeps the result. A failing disk stops the run.
void RunSession::record(std::size_t index, CaseResult r) {
  if (m_results[index]) return;  // finished already (a resumed line): a second line would duplicate it
  if (m_writer && m_fatal.empty()) {
    try {
      m_writer->append(r);
    } catch (const std::exception& e) {
      fail(std::string("cannot append to results.jsonl: ") + e.what());
    }
  }
  ++m_recorded;
  for (RunObserver* o : m_observers) o->case_recorded(index, r);
  m_results[index] = std::move(r);
}

std::vector<CaseResult> RunSession::close() {
  if (m_closed) return m_closed_results;
  m_closed = true;
  if (m_log) {
    std::fclose(m_log);
    m_log = nullptr;
  }
  std::vector<CaseResult> all;
  for (auto& r : m_results)
    if (r) all.push_back(*r);
  all.insert(all.end(), m_foreign.begin(), m_foreign.end());
  if (m_writer) {
    try {
      m_writer->close();
    } catch (const std::exception& e) {
      fail(std::string("cannot close results.jsonl: ") + e.what());
    }
    finish_run_record();
    try {
      rewrite_run_record(results_file(), m_run);
    } catch (const std::exception& e) {
      fail(std::string("cannot complete the run record: ") + e.what());
    }
    try {
      write_results_csv(m_setup.out_dir / "results.csv", all);
    } catch (const std::exception& e) {
      fail(std::string("cannot write results.csv: ") + e.what());
    }
  }
  m_closed_results = all;
  return all;
}

}  // namespace attn
