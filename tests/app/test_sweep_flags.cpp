// The sweep flags on a CLI11 subcommand: each flag lands in its SweepOverrides slot as typed, and
// every flag has help text.
#include <gtest/gtest.h>

#include "app/cli/sweep_flags.hpp"

namespace attn {
namespace {

// Parses `args` (without the program name) on a fresh `run` subcommand.
SweepOverrides parse(std::vector<std::string> args) {
  CLI::App app{"test"};
  CLI::App* run = app.add_subcommand("run", "run a sweep");
  SweepOverrides o;
  add_sweep_flags(*run, o);
  args.insert(args.begin(), "run");
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector form in reverse order
  app.parse(args);
  return o;
}

TEST(SweepFlags, EveryFlagFillsItsSlot) {
  const SweepOverrides o = parse({"--preset",
                                  "quick",
                                  "--kernels",
                                  "cpu.flash,cpu.reference",
                                  "--batch",
                                  "1,2",
                                  "--tokens",
                                  "4096",
                                  "--heads",
                                  "8",
                                  "--hidden",
                                  "512",
                                  "--heads-kv",
                                  "2",
                                  "--seq",
                                  "512:16384:x2",
                                  "--seq-q",
                                  "64",
                                  "--seq-kv",
                                  "128",
                                  "--head-dim",
                                  "320:1024:64",
                                  "--head-dim-v",
                                  "32",
                                  "--dtype",
                                  "fp16,bf16",
                                  "--causal",
                                  "0,1",
                                  "--window",
                                  "64,0;128,128",
                                  "--backend",
                                  "cpu",
                                  "--baseline",
                                  "cpu.reference",
                                  "--out",
                                  "runs/a",
                                  "--force",
                                  "--warmup-ms",
                                  "5",
                                  "--min-samples",
                                  "3",
                                  "--max-samples",
                                  "40",
                                  "--max-time-s",
                                  "0.5",
                                  "--noise",
                                  "2",
                                  "--l2",
                                  "warm",
                                  "--graphs",
                                  "--graph-batch",
                                  "8",
                                  "--seed",
                                  "9",
                                  "--no-check"});
  EXPECT_EQ(o.preset, "quick");
  EXPECT_EQ(o.kernels, "cpu.flash,cpu.reference");
  EXPECT_EQ(o.batch, "1,2");
  EXPECT_EQ(o.tokens, "4096");
  EXPECT_EQ(o.heads, "8");
  EXPECT_EQ(o.hidden, "512");
  EXPECT_EQ(o.heads_kv, "2");
  EXPECT_EQ(o.seq, "512:16384:x2");
  EXPECT_EQ(o.seq_q, "64");
  EXPECT_EQ(o.seq_kv, "128");
  EXPECT_EQ(o.head_dim, "320:1024:64");
  EXPECT_EQ(o.head_dim_v, "32");
  EXPECT_EQ(o.dtype, "fp16,bf16");
  EXPECT_EQ(o.causal, "0,1");
  EXPECT_EQ(o.window, "64,0;128,128");
  EXPECT_EQ(o.backend, "cpu");
  EXPECT_EQ(o.baseline, "cpu.reference");
  EXPECT_EQ(o.out, "runs/a");
  EXPECT_EQ(o.force, "1");
  EXPECT_EQ(o.warmup_ms, "5");
  EXPECT_EQ(o.min_samples, "3");
  EXPECT_EQ(o.max_samples, "40");
  EXPECT_EQ(o.max_time_s, "0.5");
  EXPECT_EQ(o.noise, "2");
  EXPECT_EQ(o.l2, "warm");
  EXPECT_EQ(o.graphs, "1");
  EXPECT_EQ(o.graph_batch, "8");
  EXPECT_EQ(o.seed, "9");
  EXPECT_EQ(o.no_check, "1");
}

TEST(SweepFlags, AbsentFlagsStayUnset) {
  const SweepOverrides o = parse({"--seq", "128"});
  EXPECT_EQ(o.seq, "128");
  EXPECT_FALSE(o.preset || o.kernels || o.batch || o.force || o.graphs || o.no_check || o.noise);
}

TEST(SweepFlags, NoGraphsTurnsGraphsOff) {
  EXPECT_EQ(parse({"--no-graphs"}).graphs, "0");
  EXPECT_EQ(parse({"--head-dim=64,abc"}).head_dim, "64,abc");  // checked later, by apply_overrides
}

TEST(SweepFlags, EveryFlagHasHelp) {
  CLI::App app{"test"};
  SweepOverrides o;
  add_sweep_flags(app, o);
  const auto options = app.get_options([](const CLI::Option* opt) { return opt->get_name() != "--help"; });
  EXPECT_EQ(options.size(), 36u);
  for (const CLI::Option* opt : options) EXPECT_FALSE(opt->get_description().empty()) << opt->get_name();
  const std::string help = app.help();
  for (const char* flag :
       {"--preset", "--kernels", "--window", "--pass", "--noise", "--no-check", "--graphs", "--metrics"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  EXPECT_NE(help.find("Measurement protocol"), std::string::npos);
}

TEST(SweepFlags, MissingValueIsACliError) { EXPECT_THROW(parse({"--batch"}), CLI::ParseError); }

}  // namespace
}  // namespace attn
