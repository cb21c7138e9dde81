// Variable-length batches: the axis syntax, the deterministic draw, planning (Sq/Sk the longest,
// ids following the lengths), presets, records, and Problem's packed counting.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/registry.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/sweep/preset.hpp"
#include "profiling/sweep/varlen_axis.hpp"
#include "reports/result_json.hpp"
#include "tests/support/spec_error.hpp"

namespace attn {
namespace {

using test::error_of;

TEST(VarLenAxis, ParsesEveryKindAndFormatsBack) {
  const auto v = parse_varlen_axis(
      "uniform; uniform:64@7; lognormal:512:0.6; list:1,17,4097; file:lens.txt; none", "--varlen");
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0].kind, VarLenSpec::Kind::uniform);
  EXPECT_EQ(v[1].low, 64);
  EXPECT_EQ(v[1].seed, 7u);
  EXPECT_EQ(v[2].mean, 512.0);
  EXPECT_EQ(v[2].sigma, 0.6);
  EXPECT_EQ(v[3].lengths, (std::vector<std::int64_t>{1, 17, 4097}));
  EXPECT_EQ(v[4].file, "lens.txt");
  EXPECT_FALSE(v[5].active());
  EXPECT_EQ(format_varlen_axis(v),
            "uniform;uniform:64@7;lognormal:512:0.6;list:1,17,4097;file:lens.txt;none");
  EXPECT_EQ(parse_varlen_axis(format_varlen_axis(v), "x"), v);
  EXPECT_EQ(
      error_of([] { parse_varlen_axis("gauss:3", "--varlen"); }),
      "--varlen 'gauss:3': varlen 'gauss:3': unknown kind 'gauss'; expected none, uniform[:LO], "
      "lognormal:MEAN:SIGMA, list:L1,L2,... or file:PATH, each optionally ending in @SEED, several separated "
      "by ';' (lengths are drawn up to the group's seq)");
  EXPECT_NE(error_of([] { parse_varlen_axis("list:3,0", "--varlen"); }).find("'0' is not a length >= 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_varlen_axis("lognormal:512", "--varlen"); }).find("lognormal:MEAN:SIGMA"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_varlen_axis("uniform@x", "--varlen"); }).find("seed 'x'"), std::string::npos);
}

TEST(VarLenAxis, DrawsAreDeterministicAndWithinTheCap) {
  VarLenSpec u;
  u.kind = VarLenSpec::Kind::uniform;
  u.low = 100;
  const auto a = draw_lengths(u, 1000, 4097, 42, "t");
  EXPECT_EQ(a, draw_lengths(u, 1000, 4097, 42, "t"));
  EXPECT_NE(a, draw_lengths(u, 1000, 4097, 43, "t"));
  EXPECT_EQ(*std::min_element(a.begin(), a.end()) >= 100, true);
  EXPECT_EQ(*std::max_element(a.begin(), a.end()) <= 4097, true);
  double mean = 0;
  for (const auto x : a) mean += static_cast<double>(x) / 1000.0;
  EXPECT_NEAR(mean, (100 + 4097) / 2.0, 150.0);

  VarLenSpec l;
  l.kind = VarLenSpec::Kind::lognormal;
  l.mean = 300;
  l.sigma = 0.5;
  const auto ln = draw_lengths(l, 4000, 1 << 20, 1, "t");
  double lm = 0;
  for (const auto x : ln) lm += static_cast<double>(x) / 4000.0;
  EXPECT_NEAR(lm, 300.0, 15.0);  // the mean is MEAN

  VarLenSpec list;
  list.kind = VarLenSpec::Kind::list;
  list.lengths = {5, 9000, 17};
  EXPECT_EQ(draw_lengths(list, 5, 4096, 0, "t"), (std::vector<std::int64_t>{5, 4096, 17, 5, 4096}));

  const auto path = std::filesystem::temp_directory_path() / "attnscope_varlen_lengths.txt";
  std::ofstream(path) << "120, 4000\n  77\n";
  VarLenSpec f;
  f.kind = VarLenSpec::Kind::file;
  f.file = path.string();
  for (const auto x : draw_lengths(f, 50, 1000, 3, "t")) EXPECT_TRUE(x == 120 || x == 1000 || x == 77) << x;
  f.file = "/nonexistent/lengths.txt";
  EXPECT_EQ(error_of([&] { draw_lengths(f, 2, 10, 0, "preset: group[0]"); }),
            "preset: group[0]: varlen file '/nonexistent/lengths.txt' cannot be read");
}

SweepSpec varlen_spec() {
  SweepSpec s;
  s.source = "test";
  s.kernels = {"cpu.reference"};
  SweepGroup g;
  g.batch = {8};
  g.heads = {2};
  g.seq_q = {257};
  g.head_dim = {32};
  g.varlen = parse_varlen_axis("uniform;none", "varlen");
  s.groups = {g};
  return s;
}

TEST(VarLenAxis, PlanDrawsLengthsAndKeysIdsOnThem) {
  const auto cases = plan(varlen_spec(), Backend::cpu);
  ASSERT_EQ(cases.size(), 2u);
  const Problem& p = cases[0].problem;
  ASSERT_TRUE(p.varlen.active());
  EXPECT_EQ(p.varlen.q.size(), 8u);
  EXPECT_EQ(p.varlen.q, p.varlen.kv);
  EXPECT_EQ(p.seq_q, *std::max_element(p.varlen.q.begin(), p.varlen.q.end()));
  EXPECT_EQ(p.validate(), "");
  EXPECT_EQ(cases[0].skip_reason, "");
  EXPECT_FALSE(cases[1].problem.varlen.active());
  EXPECT_EQ(cases[1].problem.seq_q, 257);
  SweepSpec other_seed = varlen_spec();
  other_seed.protocol.seed = 7;
  EXPECT_NE(plan(other_seed, Backend::cpu)[0].case_id, cases[0].case_id);
  EXPECT_EQ(plan(other_seed, Backend::cpu)[1].case_id, cases[1].case_id);  // dense ids ignore the seed
  EXPECT_EQ(plan(varlen_spec(), Backend::cpu)[0].case_id, cases[0].case_id);

  SweepSpec kv = varlen_spec();
  kv.groups[0].seq_kv = {100};
  EXPECT_NE(error_of([&] {
              plan(kv, Backend::cpu);
            }).find("with varlen: a varlen batch draws Sq = Sk per sequence"),
            std::string::npos);

  register_debug_kernels(Backend::cpu);
  SweepSpec refused = varlen_spec();
  refused.kernels = {"debug.wrong"};
  EXPECT_NE(
      plan(refused, Backend::cpu)[0].skip_reason.find("debug.wrong does not take variable-length batches"),
      std::string::npos);
}

TEST(VarLenAxis, PresetKeyAndWriterRoundTrip) {
  const SweepSpec s = parse_preset(R"(
name = "v"
kernels = ["cpu.reference"]
backend = "cpu"
[sweep]
batch = 4
heads = 2
head_dim = 32
seq = 128
varlen = ["uniform:16@3", "list:5,128"]
)",
                                   "v.toml");
  ASSERT_EQ(s.groups[0].varlen.size(), 2u);
  EXPECT_EQ(parse_preset(preset_toml(s), "saved.toml").groups[0].varlen, s.groups[0].varlen);
}

TEST(VarLenProblem, CountsPackedRowsAndEachSequencesPairs) {
  Problem p;
  p.batch = 3;
  p.heads_q = 4;
  p.heads_kv = 2;
  p.head_dim = p.head_dim_v = 8;
  p.causal = true;
  p.varlen.q = {5, 1, 17};
  p.varlen.kv = {5, 3, 17};
  p.seq_q = 17;
  p.seq_kv = 17;
  ASSERT_EQ(p.validate(), "");
  EXPECT_EQ(p.total_q(), 23);
  EXPECT_EQ(p.total_kv(), 25);
  EXPECT_EQ(p.q_elems(), 23 * 4 * 8);
  EXPECT_EQ(p.k_elems(), 25 * 2 * 8);
  EXPECT_EQ(p.lse_elems(), 23 * 4);
  EXPECT_EQ(p.q_start(2), 6);
  EXPECT_EQ(p.kv_start(2), 8);
  // Causal bottom-right per sequence: 15, 3 (one query sees all three keys), 153.
  EXPECT_EQ(p.visible_pairs_per_head(), 15 + 3 + 153);
  EXPECT_DOUBLE_EQ(p.forward_flops(), 2.0 * 4 * 16 * (15 + 3 + 153));
  EXPECT_EQ(p.sequence(1).full_label(), "B=1 Hq=4 Hkv=2 Sq=1 Sk=3 D=8 fp16 causal");
  EXPECT_EQ(p.full_label(), "B=3 Hq=4 Hkv=2 Sq=17 D=8 fp16 causal varlen 1..17 (23 tokens)");
  p.seq_q = 16;
  EXPECT_EQ(p.validate(), "varlen: seq_q = 16, seq_kv = 17 must be the longest lengths (17, 17)");
  p.seq_q = 17;
  p.varlen.kv.pop_back();
  EXPECT_EQ(p.validate(), "varlen: 3 q and 2 kv lengths for batch = 3; give one of each per sequence");

  Problem same;  // equal lengths: the packed layout is the dense one
  same.batch = 2;
  same.seq_q = same.seq_kv = 9;
  same.varlen.q = same.varlen.kv = {9, 9};
  Problem dense = same;
  dense.varlen = {};
  EXPECT_EQ(same.q_elems(), dense.q_elems());
  EXPECT_EQ(same.q_start(1), dense.q_start(1));
  EXPECT_DOUBLE_EQ(same.forward_flops(), dense.forward_flops());
}

TEST(VarLenProblem, RecordsCarryTheLengths) {
  Problem p;
  p.batch = 2;
  p.seq_q = p.seq_kv = 40;
  p.varlen.q = p.varlen.kv = {40, 3};
  const nlohmann::json j = p;
  EXPECT_EQ(j.at("varlen").at("q"), nlohmann::json::array({40, 3}));
  EXPECT_EQ(j.get<Problem>(), p);
  p.varlen = {};
  EXPECT_FALSE(nlohmann::json(p).contains("varlen"));
}

}  // namespace
}  // namespace attn
