// `attnscope run` through worker processes on the CPU backend: faults and hangs cost one case,
// SIGKILL and SIGINT mid-sweep then --resume, torn files, debug kernels, shards and merge, several
// workers and --worker-cmd, and the flags' bad-input errors (exit 2).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include "profiling/worker/subprocess.hpp"
#include "reports/jsonl_store.hpp"
#include "tests/support/cli_process.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnscope_iso_" + name);
  fs::remove_all(d);
  return d;
}

std::size_t line_count(const fs::path& file) {
  std::ifstream f(file);
  std::size_t n = 0;
  for (std::string line; std::getline(f, line);) n += line.empty() ? 0 : 1;
  return n;
}

std::map<std::string, int> lines_per_case(const LoadedRun& run) {
  std::map<std::string, int> m;
  for (const CaseResult& r : run.cases) ++m[r.case_id];
  return m;
}

std::set<std::string> case_ids(const LoadedRun& run) {
  std::set<std::string> s;
  for (const CaseResult& r : run.cases) s.insert(r.case_id);
  return s;
}

// 12 cases of about 0.05-0.1 s each: long enough to interrupt in the middle.
const std::string kTwelveCases =
    "run --backend cpu --kernels cpu.reference,cpu.flash --batch 1 --heads 2 --seq 16,32,48,64,80,96 "
    "--head-dim 16 --dtype fp32 --warmup-ms 1 --max-time-s 0.1 --noise 0.001 --quiet";

// Starts `attnscope args` in the background; waits until results.jsonl holds `lines` lines.
ChildProcess start_and_wait_for_lines(const std::string& args, const fs::path& results, std::size_t lines) {
  SpawnSpec spec;
  spec.shell_command = "exec " + attnscope_binary() + " " + args;
  ChildProcess child = ChildProcess::spawn(spec);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until && !child.try_reap()) {
    if (fs::exists(results) && line_count(results) >= lines) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return child;
}

std::string drain(int fd) {
  std::string s;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    s.append(buf, static_cast<std::size_t>(n));
  }
  return s;
}

bool process_alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

std::vector<int> worker_pids(const fs::path& log) {
  std::vector<int> pids;
  std::ifstream f(log);
  const std::regex started(R"(started .* as pid (\d+))");
  for (std::string line; std::getline(f, line);) {
    std::smatch m;
    if (std::regex_search(line, m, started)) pids.push_back(std::stoi(m[1]));
  }
  return pids;
}

TEST(IsolationCli, IssueCommandRecordsFaultAndTimeoutAndKeepsTheRest) {
  const fs::path out = fresh_dir("issue");
  const CliOutcome o = run_cli(
      "run --backend cpu --debug-kernels --kernels cpu.flash,debug.fault,debug.hang --case-timeout 5 --batch "
      "1 "
      "--heads 1 --seq 32 --head-dim 16 --dtype fp32 --out " +
      out.string());
  EXPECT_EQ(o.exit_code, 1) << o.output;  // a case faulted
  const LoadedRun run = read_results(out / "results.jsonl");
  EXPECT_TRUE(run.warnings.empty());
  ASSERT_EQ(run.cases.size(), 3u) << o.output;
  EXPECT_EQ(run.cases[0].kernel, "cpu.flash");
  EXPECT_EQ(run.cases[0].status, Status::ok) << run.cases[0].reason;
  EXPECT_EQ(run.cases[1].kernel, "debug.fault");
  EXPECT_EQ(run.cases[1].status, Status::fault);
  EXPECT_NE(run.cases[1].reason.find("was killed by SIGABRT"), std::string::npos) << run.cases[1].reason;
  EXPECT_NE(run.cases[1].reason.find("debug.fault: aborting on purpose"), std::string::npos)
      << run.cases[1].reason;
  EXPECT_EQ(run.cases[2].kernel, "debug.hang");
  EXPECT_EQ(run.cases[2].status, Status::timeout);
  EXPECT_GE(run.cases[2].wall_s, 5.0);
  EXPECT_LT(run.cases[2].wall_s, 15.0);
  EXPECT_EQ(line_count(out / "results.jsonl"), 4u);  // run record + one line per case
  EXPECT_EQ(line_count(out / "results.csv"), 4u);
  EXPECT_NE(o.output.find("3 cases: 1 ok, 1 fault, 1 timeout"), std::string::npos) << o.output;
  // Two workers: the first, and a fresh one after the abort; nothing is left after the hang's kill.
  EXPECT_EQ(worker_pids(out / "workers.log").size(), 2u);
}

TEST(IsolationCli, DebugWrongIsAMismatchAndDebugOomIsOom) {
  const fs::path out = fresh_dir("wrong_oom");
  const CliOutcome o = run_cli(
      "run --backend cpu --debug-kernels --kernels cpu.reference,debug.wrong,debug.oom --batch 2 --heads 2 "
      "--seq 24 "
      "--head-dim 8 --dtype fp32 --max-time-s 0.01 --out " +
      out.string());
  EXPECT_EQ(o.exit_code, 1) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 3u) << o.output;
  EXPECT_EQ(run.cases[0].status, Status::ok);
  const CaseResult& wrong = run.cases[1];
  EXPECT_EQ(wrong.kernel, "debug.wrong");
  EXPECT_EQ(wrong.status, Status::mismatch) << wrong.reason;
  ASSERT_TRUE(wrong.correctness.has_value());
  EXPECT_FALSE(wrong.correctness->pass);
  EXPECT_GT(wrong.correctness->rel_l2, 0.05);  // every row but the first is another row's result
  EXPECT_FALSE(wrong.timing.has_value());      // never timed after failing its check
  EXPECT_EQ(run.cases[2].kernel, "debug.oom");
  EXPECT_EQ(run.cases[2].status, Status::oom) << run.cases[2].reason;
}

TEST(IsolationCli, DebugKernelsAreUnknownWithoutTheFlag) {
  const CliOutcome o = run_cli(
      "run --backend cpu --kernels debug.fault --batch 1 --heads 1 --seq 16 --head-dim 8 "
      "--dtype fp32 --out " +
      fresh_dir("nodebug").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("debug.fault"), std::string::npos) << o.output;
}

TEST(IsolationCli, SigkillMidSweepThenResumeGivesTheUninterruptedCaseSet) {
  const fs::path whole = fresh_dir("whole");
  ASSERT_EQ(run_cli(kTwelveCases + " --out " + whole.string()).exit_code, 0);
  const LoadedRun reference = read_results(whole / "results.jsonl");
  ASSERT_EQ(reference.cases.size(), 12u);

  const fs::path out = fresh_dir("killed");
  ChildProcess child =
      start_and_wait_for_lines(kTwelveCases + " --out " + out.string(), out / "results.jsonl", 5);
  ASSERT_FALSE(child.reaped()) << "the run finished before it could be killed";
  ASSERT_EQ(::kill(child.pid(), SIGKILL), 0);
  child.finish(10);
  EXPECT_EQ(child.term_signal(), SIGKILL);
  const LoadedRun partial = read_results(out / "results.jsonl");
  EXPECT_GE(partial.cases.size(), 4u);
  EXPECT_LT(partial.cases.size(), 12u);
  // The killed supervisor's worker dies with it (PR_SET_PDEATHSIG), nothing keeps running.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::vector<int> pids = worker_pids(out / "workers.log");
  ASSERT_FALSE(pids.empty());
  for (int pid : pids) EXPECT_FALSE(process_alive(pid)) << "worker " << pid << " outlived its supervisor";

  const CliOutcome resumed = run_cli("run --resume " + out.string());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find(std::to_string(partial.cases.size()) + " already finished"),
            std::string::npos)
      << resumed.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  EXPECT_EQ(case_ids(run), case_ids(reference));
  for (const auto& [id, n] : lines_per_case(run)) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(run.cases.size(), 12u);
  for (const CaseResult& r : run.cases) EXPECT_EQ(r.status, Status::ok) << r.kernel << " " << r.reason;
  EXPECT_EQ(line_count(out / "results.csv"), 13u);  // every case, not only the resumed ones
}

TEST(IsolationCli, ResumeDropsATornLastLineAndRerunsThatCase) {
  const fs::path out = fresh_dir("torn");
  const std::string args =
      "run --backend cpu --kernels cpu.flash --batch 1 --heads 1 --seq 16,32,48 --head-dim 8 "
      "--dtype fp32 --max-time-s 0.01 --quiet --out " +
      out.string();
  ASSERT_EQ(run_cli(args).exit_code, 0);
  const fs::path file = out / "results.jsonl";
  const LoadedRun before = read_results(file);
  ASSERT_EQ(before.cases.size(), 3u);
  // Cut the last line in the middle, as a power loss during the write would.
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t last = text.rfind('\n', text.size() - 2);
  text.resize(last + 1 + (text.size() - last) / 2);
  {
    std::ofstream o(file, std::ios::trunc);
    o << text;
  }
  const LoadedRun torn = read_results(file);
  ASSERT_EQ(torn.cases.size(), 2u);
  ASSERT_EQ(torn.warnings.size(), 1u);
  EXPECT_NE(torn.warnings[0].find("results.jsonl:4"), std::string::npos) << torn.warnings[0];

  const CliOutcome resumed = run_cli("run --resume " + out.string() + " --quiet");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("ignored an unparsable last line"), std::string::npos) << resumed.output;
  const LoadedRun after = read_results(file);
  EXPECT_TRUE(after.warnings.empty());
  ASSERT_EQ(after.cases.size(), 3u);
  EXPECT_EQ(case_ids(after), case_ids(before));
  EXPECT_EQ(after.cases[2].case_id, before.cases[2].case_id);
}

TEST(IsolationCli, SigintStopsGracefullyWithTheSummaryAndResumeFinishes) {
  const fs::path out = fresh_dir("sigint");
  ChildProcess child =
      start_and_wait_for_lines(kTwelveCases + " --out " + out.string(), out / "results.jsonl", 4);
  ASSERT_FALSE(child.reaped());
  ASSERT_EQ(::kill(child.pid(), SIGINT), 0);
  child.finish(20);
  const std::string output = drain(child.stdout_fd()) + drain(child.stderr_fd());
  EXPECT_EQ(child.exit_code(), 130) << child.exit_description() << "\n" << output;
  EXPECT_NE(output.find("interrupted after"), std::string::npos) << output;
  EXPECT_NE(output.find("--resume " + out.string()), std::string::npos) << output;
  EXPECT_NE(output.find("kernels measured"), std::string::npos) << output;  // the summary table
  const LoadedRun partial = read_results(out / "results.jsonl");
  EXPECT_TRUE(partial.warnings.empty());
  EXPECT_LT(partial.cases.size(), 12u);
  EXPECT_TRUE(fs::exists(out / "results.csv"));

  const CliOutcome resumed = run_cli("run --resume " + out.string() + " --quiet");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  EXPECT_EQ(run.cases.size(), 12u);
  for (const auto& [id, n] : lines_per_case(run)) EXPECT_EQ(n, 1) << id;
}

TEST(IsolationCli, ResumeOfAFinishedRunRunsNothing) {
  const fs::path out = fresh_dir("finished");
  const std::string args =
      "run --backend cpu --kernels cpu.flash --batch 1 --heads 1 --seq 16 --head-dim 8 "
      "--dtype fp32 --max-time-s 0.01 --quiet --out " +
      out.string();
  ASSERT_EQ(run_cli(args).exit_code, 0);
  const CliOutcome again = run_cli("run --resume " + out.string() + " --quiet");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(line_count(out / "results.jsonl"), 2u);
  // The same flags again are the same plan: accepted.
  const CliOutcome same = run_cli(args.substr(0, args.find(" --out")) + " --resume " + out.string());
  EXPECT_EQ(same.exit_code, 0) << same.output;
}

TEST(IsolationCli, BadIsolationInputExitsTwoNamingTheFlag) {
  const std::string base =
      "run --backend cpu --kernels cpu.flash --batch 1 --heads 1 --seq 16 --head-dim 8 "
      "--dtype fp32 --max-time-s 0.01 --quiet ";
  struct Bad {
    std::string args, message;
  };
  const fs::path finished = fresh_dir("bad_resume");
  ASSERT_EQ(run_cli(base + "--out " + finished.string()).exit_code, 0);
  const std::vector<Bad> bad = {
      {"--shard 0/4", "--shard '0/4': k counts from 1 to n = 4"},
      {"--shard 3/2", "--shard '3/2'"},
      {"--shard half", "--shard 'half': expected k/n"},
      {"--case-timeout 0", "--case-timeout '0': expected seconds > 0"},
      {"--case-timeout abc", "--case-timeout 'abc'"},
      {"--devices 0,x", "--devices '0,x': 'x' is not a device index"},
      {"--devices 1,1", "device 1 is listed twice"},
      {"--in-process --devices 0,1", "--devices needs worker processes; drop --in-process"},
      {"--resume " + fresh_dir("nothing_here").string(),
       "nor plan.jsonl exists, so there is nothing to resume"},
      {"--resume " + finished.string() + " --causal 1", "the flags give a different plan"},
      {"--resume " + finished.string() + " --noise 5", "a different measurement protocol"},
      {"--out " + finished.string(),
       "pass --force to overwrite it, choose a new --out, or continue it with --resume"},
  };
  for (const Bad& b : bad) {
    const CliOutcome o = run_cli(base + b.args);
    EXPECT_EQ(o.exit_code, 2) << b.args << "\n" << o.output;
    EXPECT_NE(o.output.find(b.message), std::string::npos) << b.args << "\n" << o.output;
  }
  EXPECT_EQ(line_count(finished / "results.jsonl"), 2u);  // refused resumes leave the file alone
}

TEST(IsolationCli, ShardsMergeIntoThePlanOfTheWholeRun) {
  const std::string sweep =
      "run --backend cpu --kernels cpu.reference,cpu.flash --batch 1 --heads 1 --seq 16,32,48 "
      "--head-dim 8 --dtype fp32 --max-time-s 0.01 --quiet ";
  const fs::path whole = fresh_dir("shard_whole"), s1 = fresh_dir("shard_1"), s2 = fresh_dir("shard_2"),
                 merged = fresh_dir("shard_merged");
  ASSERT_EQ(run_cli(sweep + "--out " + whole.string()).exit_code, 0);
  const CliOutcome one = run_cli(sweep + "--shard 1/2 --out " + s1.string());
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("shard 1/2 of 6 planned"), std::string::npos) << one.output;
  ASSERT_EQ(run_cli(sweep + "--shard 2/2 --out " + s2.string()).exit_code, 0);
  EXPECT_EQ(read_results(s1 / "results.jsonl").cases.size(), 4u);  // problems 1 and 3 of 3
  EXPECT_EQ(read_results(s2 / "results.jsonl").cases.size(), 2u);

  const CliOutcome incomplete =
      run_cli("merge --out " + fresh_dir("shard_half").string() + " " + s2.string());
  EXPECT_EQ(incomplete.exit_code, 1) << incomplete.output;
  EXPECT_NE(incomplete.output.find("missing shards: 1/2"), std::string::npos) << incomplete.output;

  const CliOutcome m = run_cli("merge --out " + merged.string() + " " + s2.string() + " " + s1.string());
  ASSERT_EQ(m.exit_code, 0) << m.output;
  const LoadedRun a = read_results(whole / "results.jsonl");
  const LoadedRun b = read_results(merged / "results.jsonl");
  ASSERT_EQ(b.cases.size(), a.cases.size());
  for (std::size_t i = 0; i < a.cases.size(); ++i) EXPECT_EQ(b.cases[i].case_id, a.cases[i].case_id) << i;
  // The merged run keeps the earliest input's start and id (equal starts: the first argument, s2).
  const RunInfo r1 = read_results(s1 / "results.jsonl").run, r2 = read_results(s2 / "results.jsonl").run;
  const RunInfo& earliest = r1.started_at < r2.started_at ? r1 : r2;
  EXPECT_EQ(b.run.started_at, earliest.started_at);
  EXPECT_EQ(b.run.run_id, earliest.run_id + "-merged");
  EXPECT_EQ(line_count(merged / "results.csv"), 7u);
  // The merged directory carries the whole plan: resuming it has nothing left to do.
  const CliOutcome resumed = run_cli("run --resume " + merged.string() + " --quiet");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(line_count(merged / "results.jsonl"), 7u);
}

// Shards measured alike merge even when one skipped the metrics pass (it runs after the timing); a
// timing protocol that differs is refused, naming the field.
TEST(IsolationCli, MergeAcceptsADifferentMetricsPassAndNamesOtherProtocolDifferences) {
  const std::string sweep =
      "run --backend cpu --kernels cpu.reference --batch 1 --heads 1 --seq 16,32 --head-dim 8 --dtype fp32 "
      "--max-time-s 0.01 --quiet ";
  const fs::path a = fresh_dir("merge_metrics_a"), b = fresh_dir("merge_metrics_b"),
                 c = fresh_dir("merge_noise_c");
  ASSERT_EQ(run_cli(sweep + "--shard 1/2 --out " + a.string()).exit_code, 0);
  ASSERT_EQ(run_cli(sweep + "--shard 2/2 --metrics none --out " + b.string()).exit_code, 0);
  ASSERT_EQ(run_cli(sweep + "--shard 2/2 --noise 5 --out " + c.string()).exit_code, 0);
  const fs::path merged = fresh_dir("merge_metrics_ab");
  const CliOutcome ok = run_cli("merge --out " + merged.string() + " " + a.string() + " " + b.string());
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("as 'none'; timings are taken before that pass"), std::string::npos) << ok.output;
  EXPECT_EQ(read_results(merged / "results.jsonl").cases.size(), 2u);
  const CliOutcome bad =
      run_cli("merge --out " + fresh_dir("merge_noise_ac").string() + " " + a.string() + " " + c.string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("noise_pct 1.0 vs 5.0"), std::string::npos) << bad.output;
}

// Issue 24 item 3: merge accepted two unrelated runs and exited 0. Only shards of one plan merge;
// anything else is refused (exit 2) naming what differs, and nothing is written.
TEST(IsolationCli, MergeRefusesRunsThatAreNotShardsOfOnePlan) {
  const std::string common =
      "run --backend cpu --batch 1 --heads 1 --head-dim 8 --dtype fp32 --max-time-s 0.01 --quiet ";
  const fs::path ref = fresh_dir("unrel_ref"), flash = fresh_dir("unrel_flash"), s1 = fresh_dir("unrel_s1"),
                 other2 = fresh_dir("unrel_other2"), wide2 = fresh_dir("unrel_wide2");
  ASSERT_EQ(run_cli(common + "--kernels cpu.reference --seq 16,32 --out " + ref.string()).exit_code, 0);
  ASSERT_EQ(run_cli(common + "--kernels cpu.flash --seq 16 --out " + flash.string()).exit_code, 0);
  ASSERT_EQ(
      run_cli(common + "--kernels cpu.reference --seq 16,32 --shard 1/2 --out " + s1.string()).exit_code, 0);
  // Same kernels, shard count and plan size, but other sizes: a different sweep.
  ASSERT_EQ(
      run_cli(common + "--kernels cpu.reference --seq 16,48 --shard 2/2 --out " + other2.string()).exit_code,
      0);
  ASSERT_EQ(run_cli(common + "--kernels cpu.reference --seq 16,32,48 --shard 2/2 --out " + wide2.string())
                .exit_code,
            0);
  struct Bad {
    fs::path a, b;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {ref, flash, "is a whole run of a 2-case plan, not a --shard k/n job"},
      {s1, other2, "plan fingerprint"},
      {s1, wide2, "a 2-case plan vs a 3-case plan"},
  };
  for (const Bad& x : bad) {
    const fs::path out = fresh_dir("unrel_out");
    const CliOutcome o = run_cli("merge --out " + out.string() + " " + x.a.string() + " " + x.b.string());
    EXPECT_EQ(o.exit_code, 2) << o.output;
    EXPECT_NE(o.output.find("are not shards of one plan"), std::string::npos) << o.output;
    EXPECT_NE(o.output.find(x.message), std::string::npos) << o.output;
    EXPECT_FALSE(fs::exists(out / "results.jsonl"));
  }
  // A results file without its plan cannot be shown to belong.
  const fs::path no_plan = fresh_dir("unrel_no_plan");
  fs::create_directories(no_plan);
  fs::copy_file(other2 / "results.jsonl", no_plan / "results.jsonl");
  const CliOutcome o =
      run_cli("merge --out " + fresh_dir("unrel_out").string() + " " + s1.string() + " " + no_plan.string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("has no plan.jsonl"), std::string::npos) << o.output;
}

TEST(IsolationCli, TwoWorkersAndAWorkerCommandShareTheCases) {
  const std::string sweep =
      "run --backend cpu --kernels cpu.reference,cpu.flash --batch 1 --heads 1 "
      "--seq 16,32,48,64 --head-dim 8 --dtype fp32 --max-time-s 0.02 --quiet ";
  const fs::path two = fresh_dir("two_workers");
  const CliOutcome o = run_cli(sweep + "--devices 0,1 --out " + two.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("2 workers"), std::string::npos) << o.output;
  const LoadedRun run = read_results(two / "results.jsonl");
  EXPECT_EQ(run.cases.size(), 8u);
  for (const auto& [id, n] : lines_per_case(run)) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(worker_pids(two / "workers.log").size(), 2u);

  // A worker command sees its device in ATTNSCOPE_WORKER_DEVICE (an ssh or srun line would pass it on).
  const fs::path cmd = fresh_dir("worker_cmd");
  const std::string worker_cmd =
      "test \"$ATTNSCOPE_WORKER_DEVICE\" = 3 && exec " + attnscope_binary() + " worker";
  const CliOutcome c = run_cli(sweep + "--devices 3 --worker-cmd '" + worker_cmd + "' --out " + cmd.string());
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_EQ(read_results(cmd / "results.jsonl").cases.size(), 8u);

  const fs::path broken = fresh_dir("worker_cmd_broken");
  const CliOutcome b =
      run_cli(sweep + "--worker-cmd 'echo no route to host >&2; exit 255' --out " + broken.string());
  EXPECT_EQ(b.exit_code, 1) << b.output;
  EXPECT_NE(b.output.find("gave up after 3 failed starts"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("no route to host"), std::string::npos) << b.output;
}

TEST(IsolationCli, InProcessStillRunsTheSweep) {
  const fs::path out = fresh_dir("in_process");
  const CliOutcome o = run_cli(
      "run --in-process --backend cpu --kernels cpu.reference,cpu.flash --batch 1 --heads 1 "
      "--seq 16,32 --head-dim 8 --dtype fp32 --max-time-s 0.01 --out " +
      out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("in this process"), std::string::npos) << o.output;
  EXPECT_EQ(read_results(out / "results.jsonl").cases.size(), 4u);
  EXPECT_FALSE(fs::exists(out / "workers.log"));
  // An in-process run can be resumed too (plan.jsonl is written either way).
  EXPECT_EQ(run_cli("run --resume " + out.string() + " --quiet").exit_code, 0);
}

// Issue 24 item 1: a results file holding a case twice crashed readers, and --resume kept the
// duplicate. Resume warns naming the lines and writes no new line for a finished case.
TEST(IsolationCli, ResumeOfAFileWithARepeatedCaseWarnsAndAddsNothing) {
  const fs::path out = fresh_dir("dup_resume");
  const std::string args =
      "run --backend cpu --kernels cpu.flash --batch 1 --heads 1 --seq 16,32 --head-dim 8 "
      "--dtype fp32 --max-time-s 0.01 --quiet --out " +
      out.string();
  ASSERT_EQ(run_cli(args).exit_code, 0);
  const fs::path file = out / "results.jsonl";
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t line2 = text.find('\n') + 1;
  {
    std::ofstream o(file, std::ios::app);
    o << text.substr(line2, text.find('\n', line2) + 1 - line2);  // line 4 repeats line 2
  }
  const CliOutcome resumed = run_cli("run --resume " + out.string() + " --quiet");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("results.jsonl:4: case "), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find("repeats line 2"), std::string::npos) << resumed.output;
  EXPECT_EQ(line_count(file), 4u);
  const CliOutcome report = run_cli("report --no-figures " + out.string());
  EXPECT_EQ(report.exit_code, 0) << report.output;
}

// Issue 24 item 8: interrupted before any worker was ready, the run advised --resume of a directory
// holding nothing and exited 1. Now: 130, no advice.
TEST(IsolationCli, SigintBeforeAnyResultExits130WithoutResumeAdvice) {
  const fs::path out = fresh_dir("sigint_early");
  SpawnSpec spec;
  spec.shell_command = "exec " + attnscope_binary() +
                       " run --backend cpu --kernels cpu.flash --batch 1 --heads 1 --seq 16 --head-dim 8 "
                       "--dtype fp32 --worker-cmd 'exec sleep 30' --out " +
                       out.string();
  ChildProcess child = ChildProcess::spawn(spec);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ASSERT_FALSE(child.try_reap());
  ASSERT_EQ(::kill(child.pid(), SIGINT), 0);
  child.finish(20);
  const std::string output = drain(child.stdout_fd()) + drain(child.stderr_fd());
  EXPECT_EQ(child.exit_code(), 130) << child.exit_description() << "\n" << output;
  EXPECT_NE(output.find("no results were written"), std::string::npos) << output;
  EXPECT_EQ(output.find("--resume"), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(out / "results.jsonl"));
}

}  // namespace
}  // namespace attn
