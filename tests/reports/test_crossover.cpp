// attnscope crossover: planted crossovers in a synthetic FA2-style sweep (B = 16384 / S) are found
// exactly, per group; the TOML snippet is pinned and parses; the command writes it and a plot.
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "reports/crossover.hpp"
#include "tests/reports/golden.hpp"
#include "tests/reports/sample_results.hpp"
#include "tests/reports/test_report_util.hpp"

namespace attn {
namespace {

constexpr std::int64_t kSeqs[] = {512, 1024, 2048, 4096, 8192, 16384};

// Speedup of A (fa2.mma) over B (cudnn.sdpa) per seq, per (causal, head_dim) group, and the
// threshold each plants at headroom 1.1.
struct Planted {
  bool causal;
  std::int64_t head_dim;
  std::array<double, 6> speedup;
  std::optional<std::int64_t> threshold;
};
const Planted kPlanted[] = {
    {false, 64, {0.8, 1.05, 1.2, 1.15, 1.3, 1.4}, 2048},         // wins from 2048 on
    {false, 128, {1.2, 1.3, 1.0, 1.2, 1.26, 1.3}, 4096},         // an early win, a dip at 2048, then wins
    {true, 64, {1.5, 1.5, 1.5, 1.5, 1.5, 1.5}, 512},             // wins everywhere
    {true, 128, {1.2, 1.2, 1.2, 1.2, 1.2, 1.09}, std::nullopt},  // loses at the largest S
};

Problem fa2_problem(std::int64_t seq, std::int64_t d, bool causal) {
  Problem p;
  p.batch = 16384 / seq;
  p.heads_q = p.heads_kv = 2048 / d;
  p.seq_q = p.seq_kv = seq;
  p.head_dim = p.head_dim_v = d;
  p.dtype = DType::fp16;
  p.causal = causal;
  return p;
}

std::vector<CaseResult> synthetic() {
  std::vector<CaseResult> cases;
  for (const Planted& g : kPlanted)
    for (std::size_t i = 0; i < 6; ++i) {
      const Problem p = fa2_problem(kSeqs[i], g.head_dim, g.causal);
      const double b_ms = 0.25 * static_cast<double>(kSeqs[i]) / 512.0;
      cases.push_back(test::ok_case("cudnn.sdpa", p, b_ms, 1e-4));
      cases.push_back(test::ok_case("fa2.mma", p, b_ms / g.speedup[i], 1e-4));
    }
  // Noise the finder must ignore: another kernel, and a failed fa2.mma case.
  cases.push_back(test::ok_case("cublas.unfused", fa2_problem(1024, 64, false), 9.0, 1e-4));
  CaseResult bad = test::ok_case("fa2.mma", fa2_problem(512, 256, false), 0.01, 0.3);
  bad.status = Status::mismatch;
  cases.push_back(bad);
  return cases;
}

CrossoverOptions options() { return {"fa2.mma", "cudnn.sdpa", CrossAxis::seq, 1.1, ""}; }

TEST(Crossover, FindsEveryPlantedThresholdExactly) {
  const CrossoverResult r = find_crossovers(synthetic(), options());
  EXPECT_TRUE(r.tokens_convention);  // B followed S: grouped by tokens = B x S
  ASSERT_EQ(r.groups.size(), 4u);
  for (std::size_t g = 0; g < 4; ++g) {
    SCOPED_TRACE(r.groups[g].label);
    EXPECT_EQ(r.groups[g].threshold, kPlanted[g].threshold);
    ASSERT_EQ(r.groups[g].points.size(), 6u);
    for (std::size_t i = 0; i < 6; ++i) {
      EXPECT_EQ(r.groups[g].points[i].value, kSeqs[i]);
      EXPECT_NEAR(r.groups[g].points[i].speedup, kPlanted[g].speedup[i], 1e-12);
    }
  }
  EXPECT_EQ(r.groups[0].label, "fp16 full heads=32 head_dim=64 head_dim_v=64");
}

TEST(Crossover, HeadroomMovesTheThreshold) {
  CrossoverOptions o = options();
  o.headroom = 1.25;  // group 0: 1.3 and 1.4 at 8192 and 16384; group 1: 1.26 and 1.3
  const CrossoverResult r = find_crossovers(synthetic(), o);
  EXPECT_EQ(r.groups[0].threshold, 8192);
  EXPECT_EQ(r.groups[1].threshold, 8192);  // 1.26 at 8192, 1.3 at 16384
  EXPECT_EQ(r.groups[2].threshold, 512);
  EXPECT_FALSE(r.groups[3].threshold.has_value());
}

TEST(Crossover, GoldenTomlParsesBack) {
  const std::string text = crossover_toml(find_crossovers(synthetic(), options()), "synthetic.jsonl");
  test::expect_golden("crossover.toml", text);
  const toml::table t = toml::parse(text);
  EXPECT_EQ(t["crossover"]["a"].value_or(std::string()), "fa2.mma");
  EXPECT_EQ(t["crossover"]["axis"].value_or(std::string()), "seq");
  const toml::array* groups = t["crossover"]["group"].as_array();
  ASSERT_NE(groups, nullptr);
  ASSERT_EQ(groups->size(), 4u);
  for (std::size_t g = 0; g < 4; ++g) {
    const toml::table& row = *groups->get(g)->as_table();
    EXPECT_EQ(row["found"].value_or(false), kPlanted[g].threshold.has_value());
    EXPECT_EQ(row["min_seq"].value<std::int64_t>(), kPlanted[g].threshold);
    EXPECT_EQ(row["causal"].value_or(false), kPlanted[g].causal);
    EXPECT_EQ(row["head_dim"].value_or<std::int64_t>(0), kPlanted[g].head_dim);
  }
}

TEST(Crossover, OneGroupWritesATopLevelKey) {
  std::vector<CaseResult> one;
  for (const CaseResult& c : synthetic())
    if (c.problem.head_dim == 64 && !c.problem.causal) one.push_back(c);
  CrossoverOptions o = options();
  o.key = "fa2_min_len_cmp";
  const std::string text = crossover_toml(find_crossovers(one, o), "x.jsonl");
  const toml::table t = toml::parse(text);
  EXPECT_EQ(t["crossover"]["fa2_min_len_cmp"].value_or<std::int64_t>(0), 2048) << text;
  EXPECT_NEAR(t["crossover"]["speedup"].value_or(0.0), 1.2, 1e-3);
}

TEST(Crossover, HeadDimAxisUsesTheHiddenConvention) {
  // Along head_dim at fixed S: heads = 2048 / D follow the axis, so one group per (S, causal).
  CrossoverOptions o = options();
  o.axis = CrossAxis::head_dim;
  const CrossoverResult r = find_crossovers(synthetic(), o);
  EXPECT_TRUE(r.hidden_convention);
  EXPECT_EQ(r.groups.size(), 12u);  // 6 seq x 2 causal
  for (const CrossoverGroup& g : r.groups) EXPECT_EQ(g.points.size(), 2u) << g.label;
}

TEST(Crossover, UnpairedValuesAreCounted) {
  std::vector<CaseResult> cases = synthetic();
  cases.push_back(test::ok_case("fa2.mma", fa2_problem(256, 64, false), 0.01, 1e-4));  // no cudnn.sdpa at 256
  const CrossoverResult r = find_crossovers(cases, options());
  EXPECT_EQ(r.groups[0].unpaired, 1u);
  EXPECT_EQ(r.groups[0].threshold, 2048);
}

// The NSA playbook's two thresholds: the sliding branch's window length (axis window) and the
// compressed branch's length (axis seq_kv, Sk being the block count at Sq, so Sq is no group).
TEST(Crossover, NsaWindowAndCompressedLengthThresholds) {
  std::vector<CaseResult> cases;
  const std::int64_t windows[] = {32, 64, 128, 256};
  const double window_speedup[] = {0.7, 1.05, 1.3, 1.6};  // the fused kernel wins from w = 128 on
  for (std::size_t i = 0; i < 4; ++i) {
    Problem p = fa2_problem(1024, 64, true);
    p.window = {windows[i], 0};
    cases.push_back(test::ok_case("cublas.unfused", p, 1.0, 1e-4));
    cases.push_back(test::ok_case("fa2.mma", p, 1.0 / window_speedup[i], 1e-4));
  }
  Problem full = fa2_problem(1024, 64, true);  // no window: not a point of the window axis
  cases.push_back(test::ok_case("cublas.unfused", full, 1.0, 1e-4));
  cases.push_back(test::ok_case("fa2.mma", full, 0.1, 1e-4));
  CrossoverOptions o{"fa2.mma", "cublas.unfused", CrossAxis::window, 1.1, "fa2_min_len_win"};
  const CrossoverResult win = find_crossovers(cases, o);
  ASSERT_EQ(win.groups.size(), 1u);
  EXPECT_EQ(win.groups[0].points.size(), 4u);
  EXPECT_EQ(win.groups[0].threshold, 128);
  EXPECT_EQ(win.groups[0].label, "fp16 causal+win(w),0");
  const std::vector<CaseResult> windowed = cases;
  EXPECT_EQ(
      toml::parse(crossover_toml(win, "nsa.jsonl"))["crossover"]["fa2_min_len_win"].value_or<std::int64_t>(0),
      128);

  cases = windowed;  // the windows too: --mask cmp keeps the compressed branch alone
  const double cmp_speedup[] = {0.5, 1.2, 1.4};  // S 256, 512, 1024: Sk 15, 31, 63
  for (std::size_t i = 0; i < 3; ++i) {
    Problem p = fa2_problem(256 << i, 64, false);
    p.batch = 4;  // as the nsa preset: B fixed
    p.compress = {32, 16};
    p.seq_kv = p.compress.blocks_at(p.seq_q - 1);
    cases.push_back(test::ok_case("cublas.unfused", p, 1.0, 1e-4));
    cases.push_back(test::ok_case("fa2.mma", p, 1.0 / cmp_speedup[i], 1e-4));
  }
  o.axis = CrossAxis::seq_kv;
  o.key = "fa2_min_len_cmp";
  EXPECT_EQ(find_crossovers(cases, o).groups.size(), 6u);  // 4 windows and no window at S 1024, cmp32,16
  o.mask = "cmp";
  const CrossoverResult cmp = find_crossovers(cases, o);
  ASSERT_EQ(cmp.groups.size(), 1u);
  EXPECT_EQ(cmp.groups[0].points.size(), 3u);
  EXPECT_EQ(cmp.groups[0].threshold, 31);
  EXPECT_EQ(cmp.groups[0].label.rfind("fp16 cmp32,16", 0), 0u) << cmp.groups[0].label;

  o.mask = "swa";
  EXPECT_THROW(find_crossovers(cases, o), std::invalid_argument);

  const std::string md = crossover_markdown(win, "nsa.jsonl");
  EXPECT_NE(md.find("## Thresholds: fa2.mma over cublas.unfused along window"), std::string::npos) << md;
  EXPECT_NE(md.find("Chosen: **fa2_min_len_win = 128**"), std::string::npos) << md;
  EXPECT_NE(md.find("| 64 | 0.952 ms | 1.000 ms | 1.050 | no |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 128 | 0.769 ms | 1.000 ms | 1.300 | yes |"), std::string::npos) << md;
  EXPECT_NE(md.find("```toml\n# attnscope crossover"), std::string::npos) << md;
}

TEST(Crossover, BadOptionsThrowWithTheKernelList) {
  CrossoverOptions o = options();
  o.a = "fa3.wgmma";
  try {
    find_crossovers(synthetic(), o);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'fa3.wgmma' has no ok case"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cublas.unfused, cudnn.sdpa, fa2.mma"), std::string::npos)
        << e.what();
  }
  o = options();
  o.b = o.a;
  EXPECT_THROW(find_crossovers(synthetic(), o), std::invalid_argument);
  EXPECT_FALSE(parse_cross_axis("sequence").has_value());
  EXPECT_EQ(parse_cross_axis("head_dim"), CrossAxis::head_dim);
}

class CrossoverCli : public test::TempDirTest {};

TEST_F(CrossoverCli, WritesTomlAndPlot) {
  const auto dir = write_run("synthetic", test::full_run(), synthetic());
  const auto toml_file = m_dir / "thresholds.toml", png = m_dir / "crossover.png";
  const CliOutcome o = run_cli("crossover " + dir.string() + " --a fa2.mma --b cudnn.sdpa --axis seq " +
                               "--headroom 1.1 -o " + toml_file.string() + " --plot " + png.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const toml::table t = toml::parse(slurp(toml_file));
  EXPECT_EQ((*t["crossover"]["group"].as_array()->get(1)->as_table())["min_seq"].value_or<std::int64_t>(0),
            4096);
  EXPECT_NE(o.output.find("seq >= 2048"), std::string::npos) << o.output;
  ASSERT_TRUE(std::filesystem::exists(png)) << o.output;
  EXPECT_EQ(slurp(png).substr(1, 3), "PNG");
}

TEST_F(CrossoverCli, BadInputExitsTwo) {
  const auto dir = write_run("synthetic", test::full_run(), synthetic());
  auto o = run_cli("crossover " + dir.string() + " --a fa2.mma --b cudnn.sdpa --axis sequence");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  o = run_cli("crossover " + dir.string() + " --a nope --b cudnn.sdpa --axis seq");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("'nope' has no ok case"), std::string::npos) << o.output;
  o = run_cli("crossover " + (m_dir / "missing").string() + " --a fa2.mma --b cudnn.sdpa --axis seq");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  o = run_cli("crossover " + dir.string() + " --a fa2.mma --b cudnn.sdpa --axis seq --headroom -1");
  EXPECT_EQ(o.exit_code, 2) << o.output;
}

}  // namespace
}  // namespace attn
