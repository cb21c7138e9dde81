// Presets: the TOML format, strict keys and types with file:line:col errors, preset lookup, and
// every shipped preset loading and planning.
#include <gtest/gtest.h>

#include <fstream>

#include "kernels/registry.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/sweep/preset.hpp"
#include "profiling/sweep/variant.hpp"
#include "tests/support/spec_error.hpp"
#include "tests/support/test_paths.hpp"

namespace attn {
namespace {

const std::filesystem::path kPresets = std::filesystem::path(attn::test::source_dir()) / "assets" / "presets";

using test::error_of;

std::string preset_error(const std::string& text) {
  return error_of([&] { parse_preset(text, "p.toml"); });
}

TEST(Preset, FullFormat) {
  const SweepSpec s = parse_preset(R"(
name = "demo"
description = "a demo"
kernels = ["cpu.reference", "cpu.flash"]
baseline = "cpu.flash"
backend = "cpu"

[sweep]
batch = [1, 2]
heads = 8
heads_kv = "2,4"
seq = "128:256:64"
head_dim = [64, "96,128"]
dtype = "fp32"
causal = [false, 1]
window = [[64, 0], "none", 32]
pass = ["fwd", "bwd,fwd+bwd"]

[[group]]
seq_q = 64
seq_kv = [128, 256]
window = [16, 16]

[[group]]
tokens = 4096
hidden = 512
head_dim_v = 32

[protocol]
warmup_ms = 5
min_samples = 3
max_samples = 50
max_time_s = 0.25
noise_pct = 2.5
l2 = "warm"
graphs = true
graph_batch = 8
seed = 7
check = false
)",
                                   "demo.toml");
  EXPECT_EQ(s.name, "demo");
  EXPECT_EQ(s.description, "a demo");
  EXPECT_EQ(s.source, "demo.toml");
  EXPECT_EQ(s.kernels, (std::vector<std::string>{"cpu.reference", "cpu.flash"}));
  EXPECT_EQ(s.baseline, "cpu.flash");
  ASSERT_TRUE(s.backend.has_value());
  EXPECT_EQ(*s.backend, Backend::cpu);
  ASSERT_EQ(s.groups.size(), 2u);
  const SweepGroup& a = s.groups[0];
  EXPECT_EQ(a.batch, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(a.heads, (std::vector<std::int64_t>{8}));
  EXPECT_EQ(a.heads_kv, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(a.seq_q, (std::vector<std::int64_t>{64}));  // group's seq_q over [sweep]'s seq
  EXPECT_EQ(a.seq_kv, (std::vector<std::int64_t>{128, 256}));
  EXPECT_EQ(a.head_dim, (std::vector<std::int64_t>{64, 96, 128}));
  EXPECT_EQ(a.dtype, (std::vector<DType>{DType::fp32}));
  EXPECT_EQ(a.causal, (std::vector<int>{0, 1}));
  EXPECT_EQ(a.window, (std::vector<Window>{{16, 16}}));  // a flat [L, R] is one window
  EXPECT_EQ(a.pass, (std::vector<Pass>{Pass::fwd, Pass::bwd, Pass::fwd_bwd}));
  const SweepGroup& b = s.groups[1];
  EXPECT_TRUE(b.batch.empty());  // tokens replaces the inherited batch
  EXPECT_EQ(b.tokens, 4096);
  EXPECT_TRUE(b.heads.empty());
  EXPECT_EQ(b.hidden, 512);
  EXPECT_EQ(b.seq_q, (std::vector<std::int64_t>{128, 192, 256}));  // inherited from [sweep]
  EXPECT_TRUE(b.seq_kv.empty());
  EXPECT_EQ(b.head_dim_v, (std::vector<std::int64_t>{32}));
  EXPECT_EQ(b.window, (std::vector<Window>{{64, 0}, {}, {32, 0}}));
  EXPECT_DOUBLE_EQ(s.protocol.warmup_ms, 5.0);
  EXPECT_EQ(s.protocol.min_samples, 3);
  EXPECT_EQ(s.protocol.max_samples, 50);
  EXPECT_DOUBLE_EQ(s.protocol.max_time_s, 0.25);
  EXPECT_DOUBLE_EQ(s.protocol.noise_pct, 2.5);
  EXPECT_EQ(s.protocol.l2, L2Mode::warm);
  EXPECT_TRUE(s.protocol.graphs);
  EXPECT_EQ(s.protocol.graph_batch, 8);
  EXPECT_EQ(s.protocol.seed, 7u);
  EXPECT_FALSE(s.protocol.check);
}

TEST(Preset, NoGroupsMeansJustSweepAndNameDefaultsToStem) {
  const SweepSpec s =
      parse_preset("[sweep]\nbatch = 1\nheads = 2\nseq = 64\nhead_dim = 32\n", "dir/mine.toml");
  EXPECT_EQ(s.name, "mine");
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].head_dim, (std::vector<std::int64_t>{32}));
  const Protocol defaults;
  EXPECT_EQ(s.protocol.min_samples, defaults.min_samples);
  EXPECT_FALSE(s.backend.has_value());
}

TEST(Preset, GroupSeqResetsInheritedSeqKv) {
  const SweepSpec s = parse_preset("[sweep]\nseq_q = 64\nseq_kv = 4096\n[[group]]\nseq = 128\n", "p.toml");
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].seq_q, (std::vector<std::int64_t>{128}));
  EXPECT_TRUE(s.groups[0].seq_kv.empty());
}

TEST(Preset, SyntaxErrorGivesFileLineCol) {
  const std::string e = preset_error("name = \"x\"\n[sweep]\nbatch = [1, 2\n");
  EXPECT_EQ(e.rfind("p.toml:3:", 0), 0u) << e;
  EXPECT_NE(e.find("TOML syntax error"), std::string::npos) << e;
}

// Issue 18: plug-ins and kernel sources resolve against the preset's folder; kernel_sources takes
// .cu files only.
TEST(Preset, PluginsAndKernelSourcesAreFilesBesideThePreset) {
  const SweepSpec s =
      parse_preset("plugins = [\"libx.so\", \"/abs/liby.so\"]\nkernel_sources = [\"src/k.cu\"]\n",
                   "/home/me/presets/p.toml");
  EXPECT_EQ(s.plugins, (std::vector<std::string>{"/home/me/presets/libx.so", "/abs/liby.so",
                                                 "/home/me/presets/src/k.cu"}));
  EXPECT_EQ(preset_error("kernel_sources = [\"k.cpp\"]\n"),
            "p.toml:1:19: field 'kernel_sources' = 'k.cpp': not a .cu file; allowed: an array of .cu "
            "paths (absolute, or relative to the preset's folder)");
}

TEST(Preset, UnknownKeysAreErrorsWithSuggestion) {
  EXPECT_EQ(
      preset_error("[sweep]\nbatch = 1\nhead_dims = [64, 128]\n"),
      "p.toml:3:1: field 'sweep.head_dims' = '[64, 128]': unknown key (did you mean 'head_dim'?); "
      "allowed: batch, tokens, heads, hidden, heads_kv, seq, seq_q, seq_kv, head_dim, head_dim_v, dtype, "
      "causal, window, compress, select, varlen, pass");
  EXPECT_EQ(
      preset_error("kernel = [\"cpu.flash\"]\n"),
      "p.toml:1:1: field 'kernel' = '[\"cpu.flash\"]': unknown key (did you mean 'kernels'?); allowed: name, "
      "description, plugins, kernel_sources, python_kernels, kernels, baseline, backend, sweep, group, "
      "protocol");
  const std::string g = preset_error("[[group]]\nseq = 1\n[[group]]\nfoo = 1\n");
  EXPECT_EQ(g.rfind("p.toml:4:1: field 'group[1].foo' = '1': unknown key; allowed: ", 0), 0u) << g;
  const std::string p = preset_error("[protocol]\nnoise = 2\n");
  EXPECT_EQ(p.rfind("p.toml:2:1: field 'protocol.noise' = '2': unknown key; allowed: warmup_ms, ", 0), 0u)
      << p;
}

TEST(Preset, BadValuesNameFieldValueAndAllowed) {
  EXPECT_EQ(
      preset_error("[sweep]\nhead_dim = \"64,abc\"\n"),
      "p.toml:2:12: field 'sweep.head_dim' = '64,abc': 'abc' is not an integer; allowed: a list like 64,128 "
      "or a range like 320:1024:64 (start:stop:step, stop inclusive) or 512:16384:x2 (geometric), values >= "
      "1");
  EXPECT_EQ(preset_error("[sweep]\nbatch = [1, 0]\n"),
            "p.toml:2:13: field 'sweep.batch' = '0': 0 is below 1; allowed: an integer >= 1");
  EXPECT_EQ(preset_error("[sweep]\ndtype = \"fp8\"\n")
                .rfind("p.toml:2:9: field 'sweep.dtype' = 'fp8': 'fp8' is not a dtype; allowed: a list of "
                       "fp16, bf16, fp32",
                       0),
            0u);
  EXPECT_NE(preset_error("[sweep]\ncausal = 2\n").find("field 'sweep.causal' = '2': 2 is not 0 or 1"),
            std::string::npos);
  EXPECT_NE(preset_error("[sweep]\nwindow = [1, 2, 3]\n")
                .find("field 'sweep.window' = '[1, 2, 3]': a window has one or two integers, not 3"),
            std::string::npos);
  EXPECT_NE(preset_error("[sweep]\nbatch = 1\ntokens = 4096\n")
                .find("p.toml:3:10: field 'sweep.tokens' = '4096': 'batch' and 'tokens' set the same axis"),
            std::string::npos);
  EXPECT_NE(preset_error("backend = \"tpu\"\n")
                .find("p.toml:1:11: field 'backend' = 'tpu': unknown backend; "
                      "allowed: cpu or cuda"),
            std::string::npos);
  EXPECT_NE(
      preset_error("kernels = [\"cpu.flash\"]\nbaseline = \"cpu.reference\"\n")
          .find("field 'baseline' = 'cpu.reference': not one of the preset's kernels; allowed: cpu.flash"),
      std::string::npos);
  EXPECT_NE(
      preset_error("kernels = \"cpu.flash\"\n").find("field 'kernels' = 'cpu.flash': expected an array"),
      std::string::npos);
  EXPECT_NE(preset_error("[group]\nseq = 1\n").find("field 'group' = "), std::string::npos);
}

TEST(Preset, ProtocolRangesAndTypes) {
  // Issue 24 item 8: a warm-up of 1e308 ms was accepted.
  EXPECT_EQ(preset_error("[protocol]\nwarmup_ms = 1e308\n"),
            "p.toml:2:13: field 'protocol.warmup_ms' = '1e+308': '1e+308' is out of range; allowed: a number "
            "of ms >= 0 and <= 60000");
  EXPECT_NE(preset_error("[sweep]\ncausal = \"yes\"\n").find("'yes' is not 0 or 1"), std::string::npos);
  EXPECT_EQ(preset_error("[protocol]\nnoise_pct = 0\n"),
            "p.toml:2:13: field 'protocol.noise_pct' = '0': '0' is out of range; allowed: a percentage > 0 "
            "and <= 100");
  EXPECT_NE(preset_error("[protocol]\nmin_samples = 0\n")
                .find("field 'protocol.min_samples' = '0': '0' is out of range"),
            std::string::npos);
  EXPECT_NE(preset_error("[protocol]\nmax_time_s = -1.5\n").find("field 'protocol.max_time_s' = '-1.5'"),
            std::string::npos);
  EXPECT_NE(preset_error("[protocol]\nmin_samples = 2.5\n").find("expected an integer"), std::string::npos);
  EXPECT_NE(
      preset_error("[protocol]\ngraphs = 1\n").find("field 'protocol.graphs' = '1': expected true or false"),
      std::string::npos);
  EXPECT_NE(preset_error("[protocol]\nl2 = \"lukewarm\"\n")
                .find("'lukewarm' is not an L2 mode; allowed: cold or warm"),
            std::string::npos);
  EXPECT_EQ(preset_error("[protocol]\nmin_samples = 20\nmax_samples = 10\n"),
            "p.toml:3:15: field 'protocol.max_samples' = '10': max_samples = 10 is below min_samples = 20; "
            "allowed: "
            "max_samples >= min_samples");
  EXPECT_EQ(
      preset_error("[protocol]\nmin_samples = 5000\n"),
      "p.toml:2:15: field 'protocol.min_samples' = '5000': max_samples = 2000 is below min_samples = 5000; "
      "allowed: max_samples >= min_samples");
}

TEST(Preset, LoadPresetReadsFilesAndReportsTheirPath) {
  const auto dir = std::filesystem::temp_directory_path() / "attnscope_test_preset";
  std::filesystem::create_directories(dir);
  const auto file = dir / "broken.toml";
  { std::ofstream(file) << "[sweep]\nbatch = 1\n\nseq = \"1:x:2\"\n"; }
  const std::string e = error_of([&] { load_preset(file); });
  EXPECT_EQ(
      e.rfind(file.string() + ":4:7: field 'sweep.seq' = '1:x:2': range '1:x:2': stop 'x' is not an integer",
              0),
      0u)
      << e;
  EXPECT_NE(error_of([&] { load_preset(dir / "absent.toml"); }).find("cannot be read"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Preset, ResolveByNameOrPath) {
  EXPECT_EQ(resolve_preset("quick", kPresets), kPresets / "quick.toml");
  const std::string path = (kPresets / "gpt3.toml").string();
  EXPECT_EQ(resolve_preset(path, "/nonexistent"), path);
  const std::string e = error_of([] { resolve_preset("quik", kPresets); });
  EXPECT_EQ(e.rfind("unknown preset 'quik'; available: bert-base, bert-large, cpu-quick, ", 0), 0u) << e;
  EXPECT_NE(e.find("quick"), std::string::npos);
  EXPECT_NE(
      error_of([] { resolve_preset("./nope.toml", kPresets); }).find("preset file './nope.toml' not found"),
      std::string::npos);
}

TEST(Preset, ShippedPresetsAreTheDocumentedSet) {
  EXPECT_EQ(list_presets(kPresets),
            (std::vector<std::string>{"bert-base", "bert-large", "cpu-quick", "fa2-guide", "fa2-tokens16k",
                                      "ffpa-large-d", "gpt2-small", "gpt3", "l4-small", "nsa", "nsa-selected",
                                      "nsa-sliding", "nsa-varlen", "quick", "training"}));
}

// Every shipped preset loads and plans. GPU presets plan as written in a CUDA build; in a
// CPU-only build their kernels are not registered, so they plan with the CPU kernels instead
// (every case then skipped for the backend), which still checks axes and counts.
TEST(Preset, EveryShippedPresetLoadsAndPlans) {
  for (const std::string& name : list_presets(kPresets)) {
    SCOPED_TRACE(name);
    SweepSpec s = load_preset(resolve_preset(name, kPresets));
    EXPECT_EQ(s.name, name);
    EXPECT_FALSE(s.description.empty());
    EXPECT_FALSE(s.kernels.empty());
    EXPECT_NE(std::find(s.kernels.begin(), s.kernels.end(), s.baseline), s.kernels.end());
    const Backend backend = s.backend.value_or(Backend::cuda);
    bool all_registered = true;
    for (const auto& k : s.kernels) {  // an entry may be a variant: "ffpa.l1.acc_f16@stages=1"
      AxisProblem problem;
      all_registered = all_registered && try_resolve_kernel_variant(k, problem).has_value();
    }
    if (built_with_cuda()) {
      EXPECT_TRUE(all_registered);
    }
    if (!all_registered) {
      s.kernels = {"cpu.reference", "cpu.flash"};
      s.baseline = "cpu.reference";
    }
    const std::vector<Case> cases = plan(s, backend);
    EXPECT_FALSE(cases.empty());
    for (const Case& c : cases) EXPECT_TRUE(c.problem.validate().empty()) << c.problem.full_label();
  }
}

TEST(Preset, ShippedPresetShapes) {
  const auto cases_of = [](const char* name) {
    SweepSpec s = load_preset(kPresets / (std::string(name) + ".toml"));
    s.kernels = {"cpu.reference"};  // one kernel: one case per problem
    s.baseline.clear();
    return plan(s, Backend::cuda);
  };
  const auto ffpa = cases_of("ffpa-large-d");
  ASSERT_EQ(ffpa.size(), 13u);  // D = 256, 320, ..., 1024
  EXPECT_EQ(ffpa.front().problem.full_label(), "B=1 Hq=48 Sq=8192 D=256 fp16 full");
  EXPECT_EQ(ffpa.back().problem.head_dim, 1024);
  EXPECT_EQ(cases_of("quick").size(), 22u);          // 16 + GQA 2 + window 2 + Sq != Sk 2
  EXPECT_EQ(cases_of("l4-small").size(), 8u);        // 4 shapes x 2 dtypes
  EXPECT_EQ(cases_of("fa2-guide").size(), 192u);     // 4 x 4 x 3 x 4
  EXPECT_EQ(cases_of("fa2-tokens16k").size(), 36u);  // 6 seq x 3 D x 2 causal
  EXPECT_EQ(cases_of("nsa-sliding").size(), 12u);    // 3 seq x 4 windows
  const auto nsa = cases_of("nsa");
  ASSERT_EQ(nsa.size(), 15u);  // 3 seq x 4 windows, 3 seq compressed
  EXPECT_EQ(nsa.back().problem.full_label(), "B=4 Hq=16 Sq=1024 Sk=63 D=64 fp16 cmp32,16");
  const auto varlen = cases_of("nsa-varlen");
  ASSERT_EQ(varlen.size(), 18u);  // 3 seq x (causal + 4 windows + compressed)
  for (const Case& c : varlen) {
    EXPECT_EQ(c.problem.varlen.q.size(), 16u);
    EXPECT_TRUE(c.problem.causal != c.problem.compress.active()) << c.problem.full_label();
    for (const std::int64_t n : c.problem.varlen.q) EXPECT_TRUE(n >= 16 && n <= 1024) << n;
  }
  EXPECT_EQ(varlen[14].problem.window.left, 256);
  EXPECT_EQ(varlen.back().problem.compress, (Compress{32, 16}));
  EXPECT_EQ(varlen.back().problem.varlen.kv[0],
            std::max<std::int64_t>(1, Compress{32, 16}.blocks_at(varlen.back().problem.varlen.q[0] - 1)));
  const auto selected = cases_of("nsa-selected");
  ASSERT_EQ(selected.size(), 8u);  // 4 seq x (selected + causal)
  EXPECT_EQ(selected.front().problem.full_label(), "B=1 Hq=16 Hkv=4 Sq=2048 D=128 fp16 sel64x16");
  EXPECT_EQ(selected.back().problem.full_label(), "B=1 Hq=16 Hkv=4 Sq=16384 D=128 fp16 causal");
  EXPECT_EQ(cases_of("gpt3").front().problem.full_label(), "B=2 Hq=96 Sq=2048 D=128 fp16 causal");
  const auto tokens = cases_of("fa2-tokens16k");
  for (const Case& c : tokens) {
    EXPECT_EQ(c.problem.batch * c.problem.seq_q, 16384);
    EXPECT_EQ(c.problem.heads_q * c.problem.head_dim, 2048);
  }
  const auto cpu = cases_of("cpu-quick");
  EXPECT_EQ(cpu.size(), 17u);  // 4 seq x 2 masks, 3 windowed, 3 GQA, 3 Sq != Sk
}

TEST(Preset, CpuQuickRunsEveryCaseOnTheCpuBackend) {
  const SweepSpec s = load_preset(kPresets / "cpu-quick.toml");
  ASSERT_EQ(s.backend, Backend::cpu);
  const auto cases = plan(s, Backend::cpu);
  ASSERT_EQ(cases.size(), 34u);  // 17 problems x 2 kernels
  for (const Case& c : cases) EXPECT_EQ(c.skip_reason, "") << c.kernel << " " << c.problem.full_label();
}

// Issue 24 item 8: an unknown kernel in a preset was reported without its line.
TEST(Preset, UnknownKernelNamesItsLine) {
  const SweepSpec s = parse_preset(
      "name = \"x\"\nkernels = [\"cpu.flash\",\n           \"cpu.flsh\"]\n[sweep]\nbatch = 1\nheads = 1\nseq "
      "= 16\n"
      "head_dim = 8\n",
      "p.toml");
  const std::string e = error_of([&] { plan(s, Backend::cpu); });
  EXPECT_EQ(e.rfind("p.toml:3:12: unknown kernel 'cpu.flsh'; registered: ", 0), 0u) << e;
}

}  // namespace

// The writer is the parser's inverse: every shipped preset, written and read back, is the same spec.
TEST(PresetWriter, PresetTomlReadsBackEqual) {
  for (const char* name : {"cpu-quick", "quick", "fa2-tokens16k", "training", "nsa"}) {
    const SweepSpec a = load_preset(kPresets / (std::string(name) + ".toml"));
    const SweepSpec b = parse_preset(preset_toml(a), "saved.toml");
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.kernels, a.kernels);
    EXPECT_EQ(b.baseline, a.baseline);
    EXPECT_EQ(b.backend, a.backend);
    ASSERT_EQ(b.groups.size(), a.groups.size()) << name;
    for (std::size_t i = 0; i < a.groups.size(); ++i) {
      const SweepGroup &x = a.groups[i], &y = b.groups[i];
      EXPECT_EQ(x.batch, y.batch);
      EXPECT_EQ(x.pass, y.pass);
      EXPECT_EQ(x.tokens, y.tokens);
      EXPECT_EQ(x.heads, y.heads);
      EXPECT_EQ(x.hidden, y.hidden);
      EXPECT_EQ(x.heads_kv, y.heads_kv);
      EXPECT_EQ(x.seq_q, y.seq_q);
      EXPECT_EQ(x.seq_kv, y.seq_kv);
      EXPECT_EQ(x.head_dim, y.head_dim);
      EXPECT_EQ(x.head_dim_v, y.head_dim_v);
      EXPECT_EQ(x.dtype, y.dtype);
      EXPECT_EQ(x.causal, y.causal);
      EXPECT_EQ(x.window, y.window) << name;
      EXPECT_EQ(x.compress, y.compress) << name;
    }
    EXPECT_EQ(b.protocol.noise_pct, a.protocol.noise_pct);
    EXPECT_EQ(b.protocol.max_time_s, a.protocol.max_time_s);
    EXPECT_EQ(b.protocol.min_samples, a.protocol.min_samples);
    EXPECT_EQ(b.protocol.metrics, a.protocol.metrics);
  }
}

}  // namespace attn

namespace attn {

// metrics_replay: a preset key and a flag, checked against its three values, and written back.
TEST(PresetWriter, MetricsReplayIsAProtocolFieldWithItsAllowedValues) {
  SweepSpec s = parse_preset(
      "kernels = [\"cpu.flash\"]\n[sweep]\nseq = 16\n[protocol]\nmetrics_replay = \"case\"\n", "replay.toml");
  EXPECT_EQ(s.protocol.metrics_replay, MetricsReplay::whole_case);
  EXPECT_EQ(parse_preset(preset_toml(s), "saved.toml").protocol.metrics_replay, MetricsReplay::whole_case);
  EXPECT_EQ(Protocol{}.metrics_replay, MetricsReplay::automatic);
  try {
    (void)parse_preset(
        "kernels = [\"cpu.flash\"]\n[sweep]\nseq = 16\n[protocol]\nmetrics_replay = \"pass\"\n", "bad.toml");
    FAIL() << "metrics_replay = \"pass\" was accepted";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("metrics_replay"), std::string::npos) << what;
    EXPECT_NE(what.find("auto, case or kernel"), std::string::npos) << what;
  }
}

// cooldown_ms: a preset key and a flag, 0..60000 ms, written back; 0 (none) by default.
TEST(PresetWriter, CooldownIsAProtocolFieldInMilliseconds) {
  SweepSpec s = parse_preset("kernels = [\"cpu.flash\"]\n[sweep]\nseq = 16\n[protocol]\ncooldown_ms = 750\n",
                             "cool.toml");
  EXPECT_EQ(s.protocol.cooldown_ms, 750.0);
  EXPECT_EQ(parse_preset(preset_toml(s), "saved.toml").protocol.cooldown_ms, 750.0);
  EXPECT_EQ(Protocol{}.cooldown_ms, 0.0);
  for (const char* bad : {"-1", "60001", "\"soon\""}) {
    try {
      (void)parse_preset(
          std::string("kernels = [\"cpu.flash\"]\n[sweep]\nseq = 16\n[protocol]\ncooldown_ms = ") + bad +
              "\n",
          "bad.toml");
      FAIL() << "cooldown_ms = " << bad << " was accepted";
    } catch (const std::exception& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cooldown_ms"), std::string::npos) << what;
      EXPECT_NE(what.find(">= 0 and <= 60000"), std::string::npos) << what;
    }
  }
}

}  // namespace attn
