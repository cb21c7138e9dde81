// Issue 22 items 1 and 2 through the CLI on the CPU backend: every case names where it ran (host,
// device, worker slot, pid and start) and where its time went (phases that add up to its wall time),
// and the run record lists the devices that took part and the run's time totals.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "reports/jsonl_store.hpp"
#include "tests/support/cli_process.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnscope_attr_" + name);
  fs::remove_all(d);
  return d;
}

const char* kSweep =
    "run --backend cpu --kernels cpu.reference,cpu.flash --batch 1 --heads 2 --head-dim 16 --dtype fp32 "
    "--max-time-s 0.02 --warmup-ms 5 --seq 64,96";

TEST(Attribution, EachCaseNamesTheWorkerOfTwoWorkerCommandsThatRanIt) {
  const fs::path out = fresh_dir("two_cmds");
  const std::string w = "exec " + attnscope_binary() + " worker";
  const CliOutcome o = run_cli(std::string(kSweep) + ",128,160 --worker-cmd '" + w + "' --worker-cmd '" + w +
                               "' --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 8u);

  const std::string label0 = "w0 (device 0 via '" + w + "')", label1 = "w1 (device 0 via '" + w + "')";
  std::map<int, std::set<int>> pids_of_slot;
  for (const CaseResult& c : run.cases) {
    ASSERT_TRUE(c.place) << c.case_id;
    const CasePlace& p = *c.place;
    ASSERT_TRUE(p.worker_slot && p.worker_pid && p.worker_start && p.device_index) << c.case_id;
    EXPECT_EQ(p.worker, *p.worker_slot == 0 ? label0 : label1) << c.case_id;
    EXPECT_EQ(*p.worker_start, 1) << c.case_id;  // nothing faulted: each slot's first worker
    EXPECT_EQ(*p.device_index, 0);
    EXPECT_FALSE(p.host.empty());
    EXPECT_EQ(p.host, run.run.host);
    EXPECT_EQ(p.device_name, run.run.cpu_model);
    EXPECT_TRUE(p.device_uuid.empty());  // a CPU has none
    pids_of_slot[*p.worker_slot].insert(*p.worker_pid);
  }
  for (const auto& [slot, pids] : pids_of_slot) EXPECT_EQ(pids.size(), 1u) << "slot " << slot;

  // Problem affinity: a worker takes the next case of the problem it holds, so each problem's two
  // kernels share one worker, which pays for its inputs and reference once. Only at the tail may an
  // idle worker take the last case of a problem the other still holds (one problem at most here);
  // handing cases out in plan order instead would split every problem across the two workers.
  std::map<std::string, std::set<int>> slots_of_problem;
  std::map<std::string, int> references_of_problem;
  for (const CaseResult& c : run.cases) {
    const std::string key = c.problem.full_label();
    slots_of_problem[key].insert(c.place->worker_slot.value_or(-1));
    references_of_problem[key] += c.phases && c.phases->reference_s ? 1 : 0;
  }
  ASSERT_EQ(slots_of_problem.size(), 4u);
  int split = 0;
  for (const auto& [problem, slots] : slots_of_problem) {
    split += slots.size() > 1 ? 1 : 0;
    EXPECT_EQ(references_of_problem[problem], static_cast<int>(slots.size())) << problem;
  }
  EXPECT_LE(split, 1);
  if (pids_of_slot.size() == 2) {
    EXPECT_NE(*pids_of_slot[0].begin(), *pids_of_slot[1].begin());
  }

  // The run record, completed at the end: the one device (both slots share it) and the totals.
  ASSERT_EQ(run.run.devices.size(), 1u);
  EXPECT_EQ(run.run.devices[0].host, run.run.host);
  EXPECT_EQ(run.run.devices[0].name, run.run.cpu_model);
  EXPECT_TRUE(run.run.devices[0].worker == label0 || run.run.devices[0].worker == label1);
  ASSERT_TRUE(run.run.totals);
  const RunTotals& t = *run.run.totals;
  EXPECT_EQ(t.cases, 8);
  EXPECT_EQ(t.slots, 2);
  EXPECT_GT(t.wall_s, 0.0);
  EXPECT_GT(t.worker_start_s, 0.0);
  double case_wall = 0;
  for (const CaseResult& c : run.cases) case_wall += c.wall_s;
  EXPECT_NEAR(t.case_wall_s, case_wall, 1e-6 * case_wall + 1e-9);
  // Two slots over the sweep's wall time hold every case, every start and the idle time.
  EXPECT_LE(t.case_wall_s + t.handoff_s, 2 * t.wall_s * 1.01);

  // CSV carries the place columns.
  std::ifstream csv(out / "results.csv");
  std::string header;
  std::getline(csv, header);
  for (const char* col : {"host", "device_index", "device_name", "worker", "worker_pid", "phase_timed_s"})
    EXPECT_NE(header.find(col), std::string::npos) << col << " missing from " << header;
}

TEST(Attribution, PhasesAddUpToEachCaseWallTimeAndTheSummaryPrintsThem) {
  const fs::path out = fresh_dir("phases");
  const CliOutcome o = run_cli(std::string(kSweep) + ",128,160 --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 8u);
  bool paid_reference = false;
  for (const CaseResult& c : run.cases) {
    ASSERT_EQ(c.status, Status::ok) << c.case_id;
    ASSERT_TRUE(c.phases) << c.case_id;
    const CasePhases& p = *c.phases;
    ASSERT_TRUE(p.prepare_s && p.check_s && p.warmup_s && p.timed_s && p.other_s) << c.case_id;
    EXPECT_FALSE(p.metrics_s) << "the cpu backend has no metrics pass";
    EXPECT_GE(*p.warmup_s, 0.005 * 0.99) << c.case_id;  // --warmup-ms 5
    // Within 5% of the case's wall time, and the named phases hold nearly all of it.
    EXPECT_NEAR(phases_sum(p), c.wall_s, 0.05 * c.wall_s) << c.case_id;
    EXPECT_LE(*p.other_s, 0.05 * c.wall_s + 0.002) << c.case_id;
    paid_reference |= p.reference_s.has_value() && p.inputs_s.has_value();
  }
  EXPECT_TRUE(paid_reference) << "the first case of each problem pays for its inputs and reference";
  EXPECT_NE(o.output.find("time: "), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("timed samples "), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("outside the cases: worker starts "), std::string::npos) << o.output;
}

TEST(Attribution, InProcessCasesNameThisProcessAndResumeAddsToTheTotals) {
  const fs::path out = fresh_dir("in_process");
  ASSERT_EQ(run_cli(std::string(kSweep) + " --in-process --quiet --out " + out.string()).exit_code, 0);
  LoadedRun first = read_results(out / "results.jsonl");
  ASSERT_EQ(first.cases.size(), 4u);
  for (const CaseResult& c : first.cases) {
    ASSERT_TRUE(c.place);
    EXPECT_EQ(c.place->worker, "in-process");
    EXPECT_FALSE(c.place->worker_slot);
    EXPECT_GT(c.place->worker_pid.value_or(0), 0);
  }
  ASSERT_TRUE(first.run.totals);
  EXPECT_EQ(first.run.totals->cases, 4);
  EXPECT_EQ(first.run.totals->slots, 1);
  {  // drop the last two case lines, then resume: they run again and the totals grow by two cases
    std::ifstream in(out / "results.jsonl");
    std::string text, line;
    for (int n = 0; std::getline(in, line) && n < 3; ++n) text += line + "\n";
    std::ofstream(out / "results.jsonl", std::ios::trunc) << text;
  }
  ASSERT_EQ(run_cli("run --resume " + out.string() + " --quiet").exit_code, 0);
  const LoadedRun resumed = read_results(out / "results.jsonl");
  EXPECT_EQ(resumed.cases.size(), 4u);
  ASSERT_TRUE(resumed.run.totals);
  EXPECT_EQ(resumed.run.totals->cases, 4 + 2);
  EXPECT_GT(resumed.run.totals->wall_s, first.run.totals->wall_s);
}

}  // namespace
}  // namespace attn
