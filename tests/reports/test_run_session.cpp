// RunSession without worker processes: the supervisor's events are called by hand, as supervise()
// or the in-process loop calls them. The plan is on disk at construction, results.jsonl opens with
// the first device record, planned skips are recorded then, observers see every step, close()
// writes results.csv, and a resumed session runs only what is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "profiling/engine/engine.hpp"
#include "profiling/sweep/overrides.hpp"
#include "profiling/sweep/plan.hpp"
#include "reports/run_session.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnscope_session_" + name);
  fs::remove_all(d);
  return d;
}

// 2 kernels x 2 lengths x {fp32, fp16}: the fp16 half is skipped at planning on the CPU.
PlanFile small_plan() {
  SweepOverrides o;
  o.kernels = "cpu.reference,cpu.flash";
  o.batch = "1";
  o.heads = "1";
  o.seq = "16,32";
  o.head_dim = "8";
  o.dtype = "fp32,fp16";
  const SweepSpec spec = spec_from_overrides(o, "", "");
  PlanFile f;
  f.backend = Backend::cpu;
  f.cases = plan(spec, Backend::cpu);
  f.plan_cases = f.cases.size();
  for (std::size_t i = 0; i < f.cases.size(); ++i) f.plan_index.push_back(i);
  return f;
}

struct Recorder final : RunObserver {
  std::vector<std::string> events;
  void run_opened(const RunInfo& run, const fs::path&) override { events.push_back("opened " + run.host); }
  void case_started(std::size_t i, const Case&) override { events.push_back("start " + std::to_string(i)); }
  void case_recorded(std::size_t i, const CaseResult& r) override {
    events.push_back("recorded " + std::to_string(i) + " " + std::string(to_string(r.status)));
  }
  void worker_changed(std::size_t slot, const WorkerStatus& w) override {
    events.push_back("worker " + std::to_string(slot) + " " + std::string(to_string(w.state)) + " " +
                     w.device);
  }
};

SessionSetup setup_for(const fs::path& dir) {
  SessionSetup s;
  s.out_dir = dir;
  s.plan = small_plan();
  s.base.run_id = "session-test";
  s.base.command_line = "attnscope run --test";
  return s;
}

RunInfo device_record() {
  RunInfo d;
  d.backend = "cpu";
  d.host = "gpu7";
  d.cpu_model = "Test CPU";
  d.run_id = "from-the-worker";  // the session's identity wins
  return d;
}

TEST(RunSession, PlanFirstThenResultsFromTheDeviceRecordThenCsv) {
  const fs::path dir = fresh_dir("fresh");
  RunSession session(setup_for(dir));
  ASSERT_TRUE(fs::exists(dir / "plan.jsonl"));  // before any worker exists
  EXPECT_FALSE(fs::exists(dir / "results.jsonl"));
  ASSERT_EQ(session.cases().size(), 8u);
  EXPECT_EQ(session.skipped_at_plan(), 4u);
  const std::vector<std::size_t> pending = session.pending();
  ASSERT_EQ(pending.size(), 4u);

  Recorder rec;
  session.add_observer(&rec);
  WorkerSlot slot;
  slot.label = "w0 (device 0 via 'ssh gpu7 attnscope worker')";
  session.use_workers({slot});
  session.start();
  session.worker_started(0, 4242);
  session.worker_ready(0, device_record());
  ASSERT_TRUE(fs::exists(dir / "results.jsonl"));
  EXPECT_EQ(session.recorded(), 4u);  // the planned skips, as soon as the file is open
  EXPECT_EQ(session.workers()[0].device, "Test CPU");
  EXPECT_EQ(session.workers()[0].pid, 4242);
  for (std::size_t i : pending) {
    session.case_started(i, 0);
    EXPECT_EQ(session.workers()[0].state, WorkerStatus::State::busy);
    session.case_finished(i, case_record(session.cases()[i], Status::ok, ""));
  }
  session.worker_down(0, "exited with code 0", false);
  EXPECT_EQ(session.workers()[0].cases_done, 4u);
  const std::vector<CaseResult> all = session.close();
  EXPECT_EQ(all.size(), 8u);
  EXPECT_TRUE(session.fatal().empty()) << session.fatal();
  EXPECT_TRUE(fs::exists(dir / "results.csv"));
  EXPECT_TRUE(fs::exists(dir / "workers.log"));

  const LoadedRun loaded = read_results(dir / "results.jsonl");
  EXPECT_EQ(loaded.run.run_id, "session-test");
  EXPECT_EQ(loaded.run.host, "gpu7");
  EXPECT_EQ(loaded.run.command_line, "attnscope run --test");
  EXPECT_EQ(loaded.cases.size(), 8u);

  ASSERT_GE(rec.events.size(), 4u);
  EXPECT_EQ(rec.events[0], "worker 0 waiting ");
  EXPECT_EQ(rec.events[1], "worker 0 starting ");
  EXPECT_EQ(rec.events[2], "worker 0 ready Test CPU");
  EXPECT_EQ(rec.events[3], "opened gpu7");
  EXPECT_EQ(rec.events.back(), "worker 0 down Test CPU");
}

TEST(RunSession, ResumeRunsOnlyWhatIsMissingAndKeepsForeignLines) {
  const fs::path dir = fresh_dir("resume");
  {
    RunSession first(setup_for(dir));
    first.worker_ready(0, device_record());
    const std::size_t i = first.pending().front();
    first.case_finished(i, case_record(first.cases()[i], Status::ok, ""));
    first.close();
  }
  {
    // A line of a case that is not in the plan (say, from an older plan): kept, never rerun.
    LoadedRun loaded = read_results(dir / "results.jsonl");
    JsonlWriter w = JsonlWriter::resume(dir / "results.jsonl", loaded);
    Case other = small_plan().cases.front();
    other.case_id = "not-in-this-plan";
    w.append(case_record(other, Status::ok, ""));
    w.close();
  }
  LoadedRun loaded = read_results(dir / "results.jsonl");
  ASSERT_EQ(loaded.cases.size(), 6u);  // 4 skips + 1 finished + 1 foreign
  RunSession again(setup_for(dir), loaded);
  EXPECT_EQ(again.resumed(), 5u);
  EXPECT_EQ(again.pending().size(), 3u);
  EXPECT_EQ(again.to_record(), 3u);
  again.start();  // nothing new to record: the skips are in the file already
  EXPECT_EQ(again.recorded(), 0u);
  for (std::size_t i : again.pending()) again.case_finished(i, case_record(again.cases()[i], Status::ok, ""));
  const std::vector<CaseResult> all = again.close();
  EXPECT_EQ(all.size(), 9u);
  EXPECT_EQ(all.back().case_id, "not-in-this-plan");
  EXPECT_EQ(read_results(dir / "results.jsonl").cases.size(), 9u);
  EXPECT_EQ(read_results(dir / "results.jsonl").run.run_id, "session-test");
}

}  // namespace
}  // namespace attn
