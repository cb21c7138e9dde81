// Worker commands that never answer the handshake, or answer with garbage, end the run quickly
// with an error naming the command and what it printed; the plan is on disk before any worker
// starts; SIGTERM stops the run and every process a worker command started (issue 24, item 6).
// Also `run --plan-only`.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "profiling/worker/subprocess.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plan_store.hpp"
#include "tests/support/cli_process.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnscope_handshake_" + name);
  fs::remove_all(d);
  return d;
}

const std::string kSweep =
    "run --backend cpu --kernels cpu.reference,cpu.flash --batch 1 --heads 1 --seq 16,32 --head-dim 8 "
    "--dtype fp32 --max-time-s 0.01 --quiet ";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool process_alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
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

TEST(WorkerHandshake, GarbageOnStdoutFailsAtOnceNamingTheCommandAndWhatItPrinted) {
  const fs::path out = fresh_dir("garbage");
  const auto t0 = std::chrono::steady_clock::now();
  const CliOutcome o = run_cli(
      kSweep + "--worker-cmd 'echo Welcome to gpu7, last login yesterday; sleep 300' --out " + out.string());
  EXPECT_LT(seconds_since(t0), 30.0) << o.output;
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("handshake failed"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("Welcome to gpu7, last login yesterday"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("via 'echo Welcome to gpu7"), std::string::npos) << o.output;  // the command
  EXPECT_NE(o.output.find("no results were written"), std::string::npos) << o.output;
  // The plan was written before the worker started.
  ASSERT_TRUE(fs::exists(out / "plan.jsonl"));
  EXPECT_EQ(read_plan(out / "plan.jsonl").cases.size(), 4u);
  EXPECT_FALSE(fs::exists(out / "results.jsonl"));
}

TEST(WorkerHandshake, ASilentWorkerCommandTimesOutAfterWorkerStartTimeout) {
  const fs::path out = fresh_dir("silent");
  const auto t0 = std::chrono::steady_clock::now();
  const CliOutcome o =
      run_cli(kSweep + "--worker-cmd 'sleep 300' --worker-start-timeout 0.5 --out " + out.string());
  EXPECT_LT(seconds_since(t0), 30.0) << o.output;
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("no device record within the 0.5 s handshake time-out (--worker-start-timeout)"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("via 'sleep 300'"), std::string::npos) << o.output;
  EXPECT_TRUE(fs::exists(out / "plan.jsonl"));

  const CliOutcome bad = run_cli(kSweep + "--worker-start-timeout 0 --out " + fresh_dir("bad").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--worker-start-timeout '0': expected seconds > 0"), std::string::npos)
      << bad.output;
}

// The worker command starts a background process (as ssh or srun would) and never answers. SIGTERM
// to the supervisor must stop it too, not only the shell the supervisor started.
TEST(WorkerHandshake, SigtermStopsTheRunAndEveryProcessTheWorkerCommandStarted) {
  const fs::path out = fresh_dir("sigterm");
  fs::create_directories(out);
  const fs::path pid_file = out / "child.pid";
  SpawnSpec spec;
  spec.shell_command = "exec " + attnscope_binary() + " " + kSweep + "--worker-cmd 'sleep 300 & echo $! > " +
                       pid_file.string() + "; wait' --out " + out.string();
  ChildProcess run = ChildProcess::spawn(spec);
  const auto t0 = std::chrono::steady_clock::now();
  int child_pid = 0;
  while (seconds_since(t0) < 30 && child_pid == 0) {
    std::ifstream f(pid_file);
    if (f >> child_pid && child_pid > 0) break;
    child_pid = 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GT(child_pid, 0) << "the worker command never started";
  ASSERT_TRUE(process_alive(child_pid));
  EXPECT_TRUE(fs::exists(out / "plan.jsonl"));  // written before the worker started
  ASSERT_EQ(::kill(run.pid(), SIGTERM), 0);
  run.finish(20);
  const std::string output = drain(run.stdout_fd()) + drain(run.stderr_fd());
  EXPECT_EQ(run.exit_code(), 143) << run.exit_description() << "\n" << output;
  EXPECT_NE(output.find("interrupted before a worker was ready"), std::string::npos) << output;
  bool gone = false;
  for (int i = 0; i < 250 && !gone; ++i) {
    gone = !process_alive(child_pid);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "pid " << child_pid << " started by the worker command outlived the run";
  if (!gone) ::kill(child_pid, SIGKILL);
}

TEST(PlanOnly, WritesThePlanAndStartsNothing) {
  const fs::path out = fresh_dir("plan_only");
  const CliOutcome o = run_cli(kSweep + "--plan-only --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("plan: 4 cases (0 skipped at planning) on cpu -> " + (out / "plan.jsonl").string()),
            std::string::npos)
      << o.output;
  const PlanFile plan = read_plan(out / "plan.jsonl");
  ASSERT_EQ(plan.cases.size(), 4u);
  EXPECT_EQ(plan.cases[0].kernel, "cpu.reference");
  EXPECT_FALSE(fs::exists(out / "results.jsonl"));
  EXPECT_FALSE(fs::exists(out / "workers.log"));
  // The same flags without --plan-only plan the same cases.
  const fs::path full = fresh_dir("plan_full");
  ASSERT_EQ(run_cli(kSweep + "--out " + full.string()).exit_code, 0);
  const PlanFile ran = read_plan(full / "plan.jsonl");
  ASSERT_EQ(ran.cases.size(), plan.cases.size());
  for (std::size_t i = 0; i < ran.cases.size(); ++i) EXPECT_EQ(ran.cases[i].case_id, plan.cases[i].case_id);

  const CliOutcome both = run_cli(kSweep + "--plan-only --resume " + full.string());
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("--plan-only and --resume"), std::string::npos) << both.output;
}

// A directory --plan-only left is started with --resume: the plan's cases, run under the protocol
// kept in the plan (here --max-time-s 0.01, not the default), then nothing left on a second resume.
TEST(PlanOnly, ResumeStartsThePlannedDirectoryWithItsProtocol) {
  const fs::path out = fresh_dir("plan_then_resume");
  ASSERT_EQ(run_cli(kSweep + "--plan-only --out " + out.string()).exit_code, 0);
  const PlanFile plan = read_plan(out / "plan.jsonl");
  ASSERT_TRUE(plan.protocol);
  EXPECT_DOUBLE_EQ(plan.protocol->max_time_s, 0.01);
  CliOutcome o = run_cli("run --resume " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 4u);
  EXPECT_DOUBLE_EQ(run.run.protocol.max_time_s, 0.01);
  for (std::size_t i = 0; i < run.cases.size(); ++i) EXPECT_EQ(run.cases[i].case_id, plan.cases[i].case_id);
  o = run_cli("run --resume " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("4 already finished"), std::string::npos) << o.output;
  EXPECT_EQ(read_results(out / "results.jsonl").cases.size(), 4u);
}

}  // namespace
}  // namespace attn
