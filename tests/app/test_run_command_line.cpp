// The one `attnscope run` command-line builder: options -> argv -> CLI11 parse gives the same
// options, and the shell-quoted line splits back into the same argv under /bin/sh.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/run_flags.hpp"
#include "profiling/sweep/command_line.hpp"

namespace attn::cli {
namespace {

// Every flag of `run` set, with values a shell or CLI11 could mangle (spaces, quotes, ';', '$').
RunOptions every_flag() {
  RunOptions o;
  SweepOverrides& s = o.sweep;
  s.preset = "my presets/odd 'name'.toml";
  s.kernels = "cpu.reference,cpu.flash@bq=32";
  s.batch = "1,2";
  s.tokens = "4096";
  s.heads = "2:8:x2";
  s.hidden = "1024";
  s.heads_kv = "1";
  s.seq = "64,128";
  s.seq_q = "32";
  s.seq_kv = "96";
  s.head_dim = "32";
  s.head_dim_v = "64";
  s.dtype = "fp32";
  s.causal = "0,1";
  s.window = "64,0;-1,16";
  s.backend = "cpu";
  s.baseline = "cpu.reference";
  s.out = "/tmp/a dir/$HOME";
  s.force = "1";
  s.warmup_ms = "1.5";
  s.min_samples = "3";
  s.max_samples = "40";
  s.max_time_s = "0.05";
  s.noise = "2";
  s.l2 = "warm";
  s.graphs = "0";
  s.graph_batch = "8";
  s.seed = "7";
  s.no_check = "1";
  s.metrics = "+sm__throughput.avg.pct_of_peak_sustained_elapsed";
  o.quiet = true;
  o.plan_only = true;
  o.report = true;
  IsolationOptions& i = o.isolation;
  i.in_process = true;
  i.case_timeout = "30";
  i.worker_start_timeout = "5";
  i.resume = "runs/x";
  i.devices = "0,1";
  i.worker_cmds = {"ssh gpu7 'attnscope worker'", "", "srun --gpus=1 attnscope worker; echo \"done\""};
  i.shard = "2/3";
  i.debug_kernels = true;
  return o;
}

RunOptions parse_back(const std::vector<std::string>& args) {
  CLI::App app;
  RunOptions parsed;
  CLI::App* run = app.add_subcommand("run");
  add_run_flags(*run, parsed);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 pops from the back
  app.parse(reversed);
  EXPECT_TRUE(run->parsed());
  return parsed;
}

void expect_same(const RunOptions& a, const RunOptions& b) {
  const SweepOverrides &x = a.sweep, &y = b.sweep;
  EXPECT_EQ(x.preset, y.preset);
  EXPECT_EQ(x.kernels, y.kernels);
  EXPECT_EQ(x.batch, y.batch);
  EXPECT_EQ(x.tokens, y.tokens);
  EXPECT_EQ(x.heads, y.heads);
  EXPECT_EQ(x.hidden, y.hidden);
  EXPECT_EQ(x.heads_kv, y.heads_kv);
  EXPECT_EQ(x.seq, y.seq);
  EXPECT_EQ(x.seq_q, y.seq_q);
  EXPECT_EQ(x.seq_kv, y.seq_kv);
  EXPECT_EQ(x.head_dim, y.head_dim);
  EXPECT_EQ(x.head_dim_v, y.head_dim_v);
  EXPECT_EQ(x.dtype, y.dtype);
  EXPECT_EQ(x.causal, y.causal);
  EXPECT_EQ(x.window, y.window);
  EXPECT_EQ(x.backend, y.backend);
  EXPECT_EQ(x.baseline, y.baseline);
  EXPECT_EQ(x.out, y.out);
  EXPECT_EQ(x.force, y.force);
  EXPECT_EQ(x.warmup_ms, y.warmup_ms);
  EXPECT_EQ(x.min_samples, y.min_samples);
  EXPECT_EQ(x.max_samples, y.max_samples);
  EXPECT_EQ(x.max_time_s, y.max_time_s);
  EXPECT_EQ(x.noise, y.noise);
  EXPECT_EQ(x.l2, y.l2);
  EXPECT_EQ(x.graphs, y.graphs);
  EXPECT_EQ(x.graph_batch, y.graph_batch);
  EXPECT_EQ(x.seed, y.seed);
  EXPECT_EQ(x.no_check, y.no_check);
  EXPECT_EQ(x.metrics, y.metrics);
  EXPECT_EQ(a.quiet, b.quiet);
  EXPECT_EQ(a.plan_only, b.plan_only);
  EXPECT_EQ(a.report, b.report);
  const IsolationOptions &i = a.isolation, &j = b.isolation;
  EXPECT_EQ(i.in_process, j.in_process);
  EXPECT_EQ(i.case_timeout, j.case_timeout);
  EXPECT_EQ(i.worker_start_timeout, j.worker_start_timeout);
  EXPECT_EQ(i.resume, j.resume);
  EXPECT_EQ(i.devices, j.devices);
  EXPECT_EQ(i.worker_cmds, j.worker_cmds);
  EXPECT_EQ(i.shard, j.shard);
  EXPECT_EQ(i.debug_kernels, j.debug_kernels);
}

// The words /bin/sh makes of `line`, one per output line.
std::vector<std::string> shell_words(const std::string& line) {
  const std::string cmd = "printf '%s\\n' " + line;
  std::vector<std::string> words;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return words;
  std::array<char, 4096> buf{};
  std::string all;
  while (std::fgets(buf.data(), buf.size(), pipe)) all += buf.data();
  pclose(pipe);
  std::size_t start = 0;
  for (std::size_t nl; (nl = all.find('\n', start)) != std::string::npos; start = nl + 1)
    words.push_back(all.substr(start, nl - start));
  return words;
}

TEST(RunCommandLine, EveryFlagParsesBackToTheSameOptions) {
  const RunOptions o = every_flag();
  expect_same(o, parse_back(run_args(o)));
}

TEST(RunCommandLine, DefaultsAndTheOtherBooleansParseBack) {
  RunOptions o;
  expect_same(o, parse_back(run_args(o)));
  EXPECT_EQ(run_args(o), std::vector<std::string>{"run"});
  o.sweep.graphs = "1";
  o.sweep.preset = "cpu-quick";
  expect_same(o, parse_back(run_args(o)));
}

TEST(RunCommandLine, TheShellSplitsTheQuotedLineIntoTheSameArgv) {
  const RunOptions o = every_flag();
  std::vector<std::string> argv{"attnscope"};
  for (const std::string& a : run_args(o)) argv.push_back(a);
  EXPECT_EQ(shell_words(run_command_line("attnscope", o)), argv);
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("plain-1.5,x:y/z=w+v@u%"), "plain-1.5,x:y/z=w+v@u%");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(RunCommandLine, JoinedStyleIsOneArgumentPerFlag) {
  SweepOverrides o;
  o.kernels = "cpu.flash";
  o.window = "none";
  o.graphs = "1";
  EXPECT_EQ(sweep_args(o, FlagStyle::joined),
            (std::vector<std::string>{"--kernels=cpu.flash", "--window=none", "--graphs"}));
}

}  // namespace
}  // namespace attn::cli
