// `attnscope slurm` without a cluster: the scripts it writes, the sbatch calls it makes (through a
// stand-in sbatch that logs its arguments), its exit-2 errors; the sweep flags it hands to every
// shard; and `merge --plan`, which reports the cases of a shard that left nothing and makes the
// merged directory resumable. The real-Slurm run is tests/slurm/job_array.sh (label slurm).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "app/cli/sweep_flags.hpp"
#include "profiling/sweep/command_line.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plan_store.hpp"
#include "tests/support/cli_process.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnscope_slurm_" + name);
  fs::remove_all(d);
  return d;
}

std::string read_text(const fs::path& file) {
  std::ifstream f(file);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// 8 cases in 4 problems: two shards of 2 problems each.
const std::string kSweep =
    "--backend cpu --kernels cpu.reference,cpu.flash --batch 1 --heads 1 --seq 16,32 --causal 0,1 "
    "--head-dim 8 --dtype fp32 --max-time-s 0.01 --warmup-ms 1";

// A stand-in sbatch: logs each call's arguments as one line, answers "41" for the array and
// "42;cluster" (the --parsable form with a cluster) for the merge job.
fs::path fake_sbatch(const fs::path& dir, const std::string& fail_with = "") {
  fs::create_directories(dir);
  const fs::path p = dir / "sbatch";
  std::ofstream f(p);
  f << "#!/bin/bash\necho \"$*\" >> " << (dir / "calls").string() << "\n";
  if (!fail_with.empty())
    f << "echo '" << fail_with << "' >&2; exit 1\n";
  else
    f << "if [[ $* == *--dependency* ]]; then echo '42;cluster'; else echo 41; fi\n";
  f.close();
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

TEST(SlurmCli, SubmitsTheArrayThenAMergeJobThatWaitsForIt) {
  const fs::path bin = fresh_dir("bin_ok"), out = fresh_dir("submit");
  const fs::path sbatch = fake_sbatch(bin);
  const CliOutcome o =
      run_cli("slurm " + kSweep + " --shards 2 --partition gpu --time 1:00:00 --account a1 " +
              "--sbatch-arg=--qos=high --out " + out.string() + " --sbatch " + sbatch.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("submitted job array 41 (2 shards, 8 cases on cpu) and merge job 42"),
            std::string::npos)
      << o.output;
  const std::string calls = read_text(bin / "calls");
  EXPECT_EQ(calls, "--parsable " + (out / "shard.sbatch").string() +
                       "\n--parsable --dependency=afterany:41 " + (out / "merge.sbatch").string() + "\n");
  EXPECT_EQ(read_text(out / "jobs.txt"), "array 41\nmerge 42\n");

  const PlanFile plan = read_plan(out / "plan.jsonl");
  EXPECT_FALSE(plan.shard);
  EXPECT_EQ(plan.cases.size(), 8u);

  const std::string shard = read_text(out / "shard.sbatch");
  EXPECT_NE(shard.find("#SBATCH --array=1-2\n"), std::string::npos) << shard;
  EXPECT_NE(
      shard.find(
          "#SBATCH --partition=gpu\n#SBATCH --time=1:00:00\n#SBATCH --account=a1\n#SBATCH --qos=high\n"),
      std::string::npos)
      << shard;
  EXPECT_EQ(shard.find("--gres"), std::string::npos) << "the CPU backend asks for no GPU\n" << shard;
  EXPECT_NE(shard.find("--backend cpu --kernels cpu.reference,cpu.flash --batch 1 --heads 1 --seq 16,32 "
                       "--head-dim 8 --dtype "
                       "fp32 --causal 0,1 --warmup-ms 1 --max-time-s 0.01 --shard"),
            std::string::npos)
      << shard;
  EXPECT_NE(shard.find("--shard \"$k/2\" --out \"$out\""), std::string::npos) << shard;
  EXPECT_NE(shard.find("run --quiet --resume \"$out\""), std::string::npos) << shard;
  const std::string merge = read_text(out / "merge.sbatch");
  EXPECT_NE(merge.find("#SBATCH --partition=gpu\n"), std::string::npos) << merge;
  EXPECT_EQ(merge.find("--qos"), std::string::npos) << "--sbatch-arg is for the shards only\n" << merge;
  EXPECT_NE(merge.find("--plan " + (out / "plan.jsonl").string() + " --out " + (out / "merged").string()),
            std::string::npos)
      << merge;

  // The same directory again: refused, nothing submitted.
  const CliOutcome again =
      run_cli("slurm " + kSweep + " --shards 2 --out " + out.string() + " --sbatch " + sbatch.string());
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("already holds a submitted sweep"), std::string::npos) << again.output;
  EXPECT_EQ(read_text(bin / "calls"), calls);
}

TEST(SlurmCli, DryRunPrintsBothScriptsAndWritesNothing) {
  const fs::path out = fresh_dir("dry");
  const CliOutcome o =
      run_cli("slurm " + kSweep + " --shards 4 --dry-run --sbatch /nonexistent/sbatch --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("8 cases on cpu in 4 shards"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("#SBATCH --array=1-4"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("# ---- " + (out / "merge.sbatch").string()), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(out));

  // Without sweep flags the shards get the default preset by name, not their host's own default.
  const CliOutcome d = run_cli("slurm --backend cpu --shards 2 --dry-run --out " + out.string());
  ASSERT_EQ(d.exit_code, 0) << d.output;
  EXPECT_NE(d.output.find("run --quiet --preset cpu-quick --backend cpu --shard"), std::string::npos)
      << d.output;
}

TEST(SlurmCli, BadInputExitsTwoNamingTheFlag) {
  const fs::path bin = fresh_dir("bin_bad");
  const fs::path sbatch = fake_sbatch(bin, "sbatch: error: invalid partition specified: nope");
  const fs::path out = fresh_dir("bad");
  struct Bad {
    std::string args, message;
  };
  const Bad cases[] = {
      {"--shards 0", "--shards 0: expected 1 to 10000"},
      {"--shards 5",
       "--shards 5: the plan has 8 cases in 4 problems, and a problem's cases run in one shard; "
       "use at most 4 shards"},
      {"--shards 2 --force", "--force"},
      {"--shards 2 --sbatch-arg=qos", "--sbatch-arg 'qos': expected an sbatch option"},
      {"--shards 2 --sbatch /nonexistent/sbatch", "/nonexistent/sbatch: not found or not executable"},
      {"--shards 2 --sbatch no-such-sbatch-here", "no-such-sbatch-here: not found on PATH"},
      {"--shards 2 --seq 0", "--seq"},
      {"--shards 2 --partition nope --sbatch " + sbatch.string(),
       "sbatch did not accept the job array (exit 1): sbatch: error: invalid partition specified: nope"},
  };
  for (const Bad& b : cases) {
    const CliOutcome o = run_cli("slurm " + kSweep + " --out " + out.string() + " " + b.args);
    EXPECT_EQ(o.exit_code, 2) << b.args << "\n" << o.output;
    EXPECT_NE(o.output.find(b.message), std::string::npos) << b.args << "\n" << o.output;
  }
}

// What each shard job parses must give the overrides the submitting host parsed.
TEST(SlurmCli, SweepFlagArgsParseBackToTheSameOverrides) {
  const std::vector<std::string> given = {"--preset", "cpu-quick",  "--kernels",   "cpu.flash@block_q=32",
                                          "--seq",    "64,128",     "--causal",    "0,1",
                                          "--window", "32,0;-1,-1", "--no-graphs", "--no-check",
                                          "--noise",  "1.5",        "--metrics",   "none",
                                          "--out",    "x",          "--force"};
  const auto parse = [](std::vector<std::string> args) {
    CLI::App app;
    SweepOverrides o;
    add_sweep_flags(app, o);
    std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
    app.parse(args);
    return o;
  };
  const SweepOverrides a = parse(given);
  SweepOverrides shard = a;  // as attnscope slurm hands the sweep to each shard: its own --out
  shard.out.reset();
  shard.force.reset();
  const SweepOverrides b = parse(sweep_args(shard));
  EXPECT_EQ(b.preset, a.preset);
  EXPECT_EQ(b.kernels, a.kernels);
  EXPECT_EQ(b.seq, a.seq);
  EXPECT_EQ(b.causal, a.causal);
  EXPECT_EQ(b.window, a.window);
  EXPECT_EQ(b.graphs, std::optional<std::string>("0"));
  EXPECT_EQ(b.no_check, a.no_check);
  EXPECT_EQ(b.noise, a.noise);
  EXPECT_EQ(b.metrics, a.metrics);
  EXPECT_FALSE(b.out);
  EXPECT_FALSE(b.force);
}

// A shard that wrote nothing (cancelled before it ran): without --plan its cases are unknown to the
// merge; with it they are listed, and the merged directory resumes exactly those.
TEST(MergeCli, PlanReportsTheCasesOfAShardThatLeftNothingAndResumesThem) {
  const std::string run = "run " + kSweep + " --quiet ";
  const fs::path whole = fresh_dir("whole"), s1 = fresh_dir("s1"), merged = fresh_dir("merged");
  ASSERT_EQ(run_cli(run + "--out " + whole.string()).exit_code, 0);
  ASSERT_EQ(run_cli(run + "--shard 1/2 --out " + s1.string()).exit_code, 0);

  const CliOutcome m = run_cli("merge " + s1.string() + " --plan " + (whole / "plan.jsonl").string() +
                               " --out " + merged.string());
  EXPECT_EQ(m.exit_code, 1) << m.output;
  EXPECT_NE(m.output.find("missing shards: 2/2"), std::string::npos) << m.output;
  const LoadedRun w = read_results(whole / "results.jsonl");
  const std::size_t have = read_results(s1 / "results.jsonl").cases.size();
  ASSERT_EQ(have, 4u);
  EXPECT_NE(m.output.find("4 planned cases have no result: "), std::string::npos) << m.output;
  for (const CaseResult& r : w.cases) {
    bool in_s1 = false;
    for (const CaseResult& s : read_results(s1 / "results.jsonl").cases)
      in_s1 = in_s1 || s.case_id == r.case_id;
    EXPECT_EQ(m.output.find(r.case_id) != std::string::npos, !in_s1) << r.case_id << "\n" << m.output;
  }
  EXPECT_NE(m.output.find("attnscope run --resume " + merged.string()), std::string::npos) << m.output;
  EXPECT_EQ(read_plan(merged / "plan.jsonl").cases.size(), 8u);

  const CliOutcome resumed = run_cli("run --resume " + merged.string());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("4 already finished"), std::string::npos) << resumed.output;
  const LoadedRun after = read_results(merged / "results.jsonl");
  ASSERT_EQ(after.cases.size(), w.cases.size());
  std::set<std::string> ids_after, ids_whole;
  for (const CaseResult& r : after.cases) ids_after.insert(r.case_id);
  for (const CaseResult& r : w.cases) ids_whole.insert(r.case_id);
  EXPECT_EQ(ids_after, ids_whole);

  // A plan of another size is not this sweep's.
  const fs::path other = fresh_dir("other");
  ASSERT_EQ(
      run_cli("run --backend cpu --kernels cpu.flash --batch 1 --heads 1 --seq 16 --head-dim 8 --dtype fp32 "
              "--max-time-s 0.01 --quiet --out " +
              other.string())
          .exit_code,
      0);
  const CliOutcome wrong = run_cli("merge " + s1.string() + " --plan " + (other / "plan.jsonl").string() +
                                   " --out " + fresh_dir("wrong").string());
  EXPECT_EQ(wrong.exit_code, 2) << wrong.output;
  EXPECT_NE(wrong.output.find("is not a shard of --plan"), std::string::npos) << wrong.output;
  const CliOutcome sharded = run_cli("merge " + s1.string() + " --plan " + (s1 / "plan.jsonl").string() +
                                     " --out " + fresh_dir("sharded").string());
  EXPECT_EQ(sharded.exit_code, 2) << sharded.output;
  EXPECT_NE(sharded.output.find("--plan takes the whole plan"), std::string::npos) << sharded.output;
}

}  // namespace
}  // namespace attn
