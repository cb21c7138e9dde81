// Overrides: each flag replaces its axis in every group, the paired axes clear each other, and
// errors name the flag.
#include <gtest/gtest.h>

#include "profiling/sweep/overrides.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/sweep/preset.hpp"
#include "tests/support/spec_error.hpp"
#include "tests/support/test_paths.hpp"

namespace attn {
namespace {

const std::filesystem::path kPresets = std::filesystem::path(attn::test::source_dir()) / "assets" / "presets";

using test::error_of;

SweepSpec two_groups() {
  return parse_preset(R"(
kernels = ["cpu.reference", "cpu.flash"]
baseline = "cpu.flash"
[sweep]
tokens = 1024
hidden = 256
head_dim = 64
[[group]]
seq_q = 64
seq_kv = 512
[[group]]
seq = 128
causal = 1
window = "32,0"
)",
                      "two.toml");
}

TEST(Overrides, AxisFlagsReplaceEveryGroup) {
  SweepSpec s = two_groups();
  SweepOverrides o;
  o.seq = "256,512";
  o.head_dim = "32";
  o.dtype = "fp32";
  o.causal = "0,1";
  o.window = "none;16,16";
  o.heads_kv = "2";
  o.head_dim_v = "16";
  apply_overrides(s, o);
  for (const SweepGroup& g : s.groups) {
    EXPECT_EQ(g.seq_q, (std::vector<std::int64_t>{256, 512}));
    EXPECT_TRUE(g.seq_kv.empty());  // --seq is square
    EXPECT_EQ(g.head_dim, (std::vector<std::int64_t>{32}));
    EXPECT_EQ(g.head_dim_v, (std::vector<std::int64_t>{16}));
    EXPECT_EQ(g.heads_kv, (std::vector<std::int64_t>{2}));
    EXPECT_EQ(g.dtype, (std::vector<DType>{DType::fp32}));
    EXPECT_EQ(g.causal, (std::vector<int>{0, 1}));
    EXPECT_EQ(g.window, (std::vector<Window>{{}, {16, 16}}));
    EXPECT_EQ(g.tokens, 1024);  // untouched
  }
}

TEST(Overrides, BatchClearsTokensAndHeadsClearsHidden) {
  SweepSpec s = two_groups();
  SweepOverrides o;
  o.batch = "3";
  o.heads = "4";
  apply_overrides(s, o);
  for (const SweepGroup& g : s.groups) {
    EXPECT_FALSE(g.tokens.has_value());
    EXPECT_FALSE(g.hidden.has_value());
    EXPECT_EQ(g.batch, (std::vector<std::int64_t>{3}));
    EXPECT_EQ(g.heads, (std::vector<std::int64_t>{4}));
  }
  SweepOverrides back;
  back.tokens = "2048";
  back.hidden = "512";
  apply_overrides(s, back);
  for (const SweepGroup& g : s.groups) {
    EXPECT_TRUE(g.batch.empty());
    EXPECT_TRUE(g.heads.empty());
    EXPECT_EQ(g.tokens, 2048);
    EXPECT_EQ(g.hidden, 512);
  }
}

TEST(Overrides, SeqQAndSeqKvSeparately) {
  SweepSpec s = two_groups();
  SweepOverrides o;
  o.seq_kv = "1024";
  apply_overrides(s, o);
  EXPECT_EQ(s.groups[0].seq_q, (std::vector<std::int64_t>{64}));
  EXPECT_EQ(s.groups[1].seq_q, (std::vector<std::int64_t>{128}));
  for (const SweepGroup& g : s.groups) EXPECT_EQ(g.seq_kv, (std::vector<std::int64_t>{1024}));
}

TEST(Overrides, PlannedCasesFollowTheFlags) {
  SweepSpec s = two_groups();
  SweepOverrides o;
  o.seq = "128";
  o.causal = "1";
  o.window = "none";
  o.kernels = "cpu.flash";
  apply_overrides(s, o);
  // Both groups now describe the same problem: one case survives.
  const auto cases = plan(s, Backend::cpu);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].problem.full_label(), "B=8 Hq=4 Sq=128 D=64 fp32 causal");
  EXPECT_EQ(s.baseline, "cpu.flash");
}

TEST(Overrides, KernelsAndBaseline) {
  SweepSpec s = two_groups();
  SweepOverrides o;
  o.kernels = "cpu.reference";
  apply_overrides(s, o);
  EXPECT_EQ(s.kernels, (std::vector<std::string>{"cpu.reference"}));
  EXPECT_EQ(s.baseline, "");  // the preset's baseline was dropped with its kernel
  SweepOverrides b;
  b.kernels = "cpu.flash, cpu.reference";
  b.baseline = "cpu.reference";
  apply_overrides(s, b);
  EXPECT_EQ(s.kernels, (std::vector<std::string>{"cpu.flash", "cpu.reference"}));
  EXPECT_EQ(s.baseline, "cpu.reference");

  SweepOverrides bad;
  bad.kernels = "cpu.flash,cpu.flsh";
  const std::string e = error_of([&] { apply_overrides(s, bad); });
  EXPECT_EQ(e.rfind("--kernels 'cpu.flash,cpu.flsh': unknown kernel 'cpu.flsh'", 0), 0u) << e;
  EXPECT_NE(e.find("expected registered kernel ids separated by commas, from: cpu.reference, cpu.flash"),
            std::string::npos)
      << e;
  SweepOverrides base;
  base.baseline = "naive.unfused";
  EXPECT_EQ(
      error_of([&] { apply_overrides(s, base); }),
      "--baseline 'naive.unfused': not one of the kernels of this run; expected cpu.flash, cpu.reference");
}

TEST(Overrides, ErrorsNameTheFlag) {
  SweepSpec s = two_groups();
  SweepOverrides o;
  o.head_dim = "64,abc";
  EXPECT_EQ(error_of([&] { apply_overrides(s, o); }),
            "--head-dim '64,abc': 'abc' is not an integer; expected a list like 64,128 or a range like "
            "320:1024:64 (start:stop:step, stop inclusive) or 512:16384:x2 (geometric), values >= 1");
  SweepOverrides both;
  both.batch = "1";
  both.tokens = "1024";
  EXPECT_NE(error_of([&] { apply_overrides(s, both); }).find("--batch and --tokens set the same axis"),
            std::string::npos);
  SweepOverrides backend;
  backend.backend = "tpu";
  EXPECT_EQ(error_of([&] { apply_overrides(s, backend); }),
            "--backend 'tpu': unknown backend; expected cpu or cuda");
}

TEST(Overrides, ProtocolFlags) {
  SweepSpec s = two_groups();
  SweepOverrides o;
  o.warmup_ms = "0";
  o.min_samples = "3";
  o.max_samples = "30";
  o.max_time_s = "0.5";
  o.noise = "0.5";
  o.l2 = "warm";
  o.graphs = "1";
  o.graph_batch = "16";
  o.seed = "1234";
  o.no_check = "1";
  o.backend = "cpu";
  o.out = "runs/x";
  o.force = "1";
  apply_overrides(s, o);
  EXPECT_DOUBLE_EQ(s.protocol.warmup_ms, 0.0);
  EXPECT_EQ(s.protocol.min_samples, 3);
  EXPECT_EQ(s.protocol.max_samples, 30);
  EXPECT_DOUBLE_EQ(s.protocol.max_time_s, 0.5);
  EXPECT_DOUBLE_EQ(s.protocol.noise_pct, 0.5);
  EXPECT_EQ(s.protocol.l2, L2Mode::warm);
  EXPECT_TRUE(s.protocol.graphs);
  EXPECT_EQ(s.protocol.graph_batch, 16);
  EXPECT_EQ(s.protocol.seed, 1234u);
  EXPECT_FALSE(s.protocol.check);
  EXPECT_EQ(s.backend, Backend::cpu);
  EXPECT_EQ(s.out_dir, "runs/x");
  EXPECT_TRUE(s.force);

  const std::pair<void (*)(SweepOverrides&), const char*> bad[] = {
      {[](SweepOverrides& x) { x.noise = "0"; },
       "--noise '0': '0' is out of range; expected a percentage > 0 and <= 100"},
      {[](SweepOverrides& x) { x.min_samples = "0"; },
       "--min-samples '0': '0' is out of range; expected an integer >= 1 and <= 1000000"},
      {[](SweepOverrides& x) { x.max_time_s = "soon"; },
       "--max-time-s 'soon': 'soon' is not a number; expected a number of seconds > 0 and <= 3600"},
      // Issue 24 item 8: values past any useful setting, and bool spellings the message does not
      // name, were accepted.
      {[](SweepOverrides& x) { x.warmup_ms = "1e308"; },
       "--warmup-ms '1e308': '1e308' is out of range; expected a number of ms >= 0 and <= 60000"},
      {[](SweepOverrides& x) { x.max_time_s = "86400"; },
       "--max-time-s '86400': '86400' is out of range; expected a number of seconds > 0 and <= 3600"},
      {[](SweepOverrides& x) { x.causal = "yes"; },
       "--causal 'yes': 'yes' is not 0 or 1; expected a list of 0, 1 (or true, false) like 0,1"},
      {[](SweepOverrides& x) { x.l2 = "hot"; }, "--l2 'hot': 'hot' is not an L2 mode; expected cold or warm"},
      {[](SweepOverrides& x) { x.seed = "-1"; },
       "--seed '-1': '-1' is out of range; expected an integer >= 0"},
      {[](SweepOverrides& x) { x.max_samples = "2"; },
       "--min-samples/--max-samples: max_samples = 2 is below min_samples = 3 (after applying the preset's "
       "[protocol])"},
  };
  for (const auto& [set, message] : bad) {
    SweepOverrides x;
    set(x);
    EXPECT_EQ(error_of([&] { apply_overrides(s, x); }), message);
  }
}

TEST(Overrides, FlagsAloneBuildASpec) {
  SweepOverrides o;
  o.kernels = "cpu.flash";
  o.batch = "1";
  o.heads = "2";
  o.seq = "64";
  o.head_dim = "32";
  const SweepSpec s = spec_from_overrides(o, kPresets, "");
  EXPECT_EQ(s.source, "command line");
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(plan(s, Backend::cpu).size(), 1u);
}

TEST(Overrides, PresetByFlagOrDefault) {
  SweepOverrides o;
  o.seq = "32";
  const SweepSpec d = spec_from_overrides(o, kPresets, "cpu-quick");
  EXPECT_EQ(d.name, "cpu-quick");
  for (const SweepGroup& g : d.groups) EXPECT_EQ(g.seq_q, (std::vector<std::int64_t>{32}));
  o.preset = "gpt3";
  EXPECT_EQ(spec_from_overrides(o, kPresets, "cpu-quick").name, "gpt3");
  o.preset = "nonesuch";
  EXPECT_EQ(
      error_of([&] { spec_from_overrides(o, kPresets, "cpu-quick"); }).rfind("unknown preset 'nonesuch'", 0),
      0u);
}

}  // namespace
}  // namespace attn
