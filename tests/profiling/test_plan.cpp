// Planning: products, order, duplicates, defaults, derived axes, skip reasons and case ids.
#include <gtest/gtest.h>

#include <set>

#include "kernels/registry.hpp"
#include "profiling/sweep/plan.hpp"
#include "tests/support/spec_error.hpp"

namespace attn {
namespace {

using test::error_of;

SweepSpec cpu_spec() {
  SweepSpec s;
  s.source = "test";
  s.kernels = {"cpu.reference", "cpu.flash"};
  SweepGroup g;
  g.batch = {1, 2};
  g.heads = {4};
  g.seq_q = {64, 128};
  g.head_dim = {32};
  s.groups = {g};
  return s;
}

TEST(Plan, ProductInProblemMajorOrder) {
  const auto cases = plan(cpu_spec(), Backend::cpu);
  ASSERT_EQ(cases.size(), 8u);  // 2 batch x 2 seq x 2 kernels
  const char* labels[] = {"B=1 Hq=4 Sq=64 D=32 fp32 full", "B=1 Hq=4 Sq=128 D=32 fp32 full",
                          "B=2 Hq=4 Sq=64 D=32 fp32 full", "B=2 Hq=4 Sq=128 D=32 fp32 full"};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(cases[i].kernel, i % 2 == 0 ? "cpu.reference" : "cpu.flash");
    EXPECT_EQ(cases[i].problem.full_label(), labels[i / 2]);
    EXPECT_EQ(cases[i].skip_reason, "");
  }
  EXPECT_EQ(cases[0].problem, cases[1].problem);
  // Defaults: heads_kv = heads, seq_kv = seq_q, head_dim_v = head_dim, no mask.
  EXPECT_EQ(cases[2].problem.heads_kv, 4);
  EXPECT_EQ(cases[2].problem.seq_kv, 128);
  EXPECT_EQ(cases[2].problem.head_dim_v, 32);
  EXPECT_FALSE(cases[2].problem.causal);
  EXPECT_FALSE(cases[2].problem.window.active());
}

TEST(Plan, KernelOrderFollowsTheSpec) {
  SweepSpec s = cpu_spec();
  s.kernels = {"cpu.flash", "cpu.reference"};
  const auto cases = plan(s, Backend::cpu);
  EXPECT_EQ(cases[0].kernel, "cpu.flash");
  EXPECT_EQ(cases[1].kernel, "cpu.reference");
}

TEST(Plan, AxisNestingOrder) {
  SweepSpec s = cpu_spec();
  s.kernels = {"cpu.reference"};
  s.groups[0].batch = {1};
  s.groups[0].seq_q = {16, 32};
  s.groups[0].causal = {0, 1};
  const auto cases = plan(s, Backend::cpu);
  ASSERT_EQ(cases.size(), 4u);
  // causal is outside seq_q: seq varies fastest.
  EXPECT_EQ(cases[0].problem.mask_label() + std::to_string(cases[0].problem.seq_q), "full16");
  EXPECT_EQ(cases[1].problem.mask_label() + std::to_string(cases[1].problem.seq_q), "full32");
  EXPECT_EQ(cases[2].problem.mask_label() + std::to_string(cases[2].problem.seq_q), "causal16");
  EXPECT_EQ(cases[3].problem.mask_label() + std::to_string(cases[3].problem.seq_q), "causal32");
}

TEST(Plan, DuplicatesDroppedFirstKept) {
  SweepSpec s = cpu_spec();
  SweepGroup second = s.groups[0];
  second.seq_q = {128, 256};
  second.seq_kv = {128};  // (Sq=128, Sk=128) repeats group 0's default; (256, 128) is new
  s.groups.push_back(second);
  const auto cases = plan(s, Backend::cpu);
  // Group 0: 4 problems. Group 1: (B, Sq, Sk) in {1,2} x {(128,128) dup, (256,128) new}.
  ASSERT_EQ(cases.size(), (4u + 2u) * 2u);
  std::set<std::string> ids;
  for (const Case& c : cases) EXPECT_TRUE(ids.insert(c.case_id).second);
  EXPECT_EQ(cases[8].problem.full_label(), "B=1 Hq=4 Sq=256 Sk=128 D=32 fp32 full");
  EXPECT_EQ(cases[10].problem.full_label(), "B=2 Hq=4 Sq=256 Sk=128 D=32 fp32 full");
  // A kernel listed twice is an error (test_variant.cpp: two entries naming one variant).
  s.kernels = {"cpu.flash", "cpu.flash"};
  EXPECT_THROW(plan(s, Backend::cpu), SpecError);
}

TEST(Plan, DtypeDefaultsByBackend) {
  EXPECT_EQ(plan(cpu_spec(), Backend::cpu)[0].problem.dtype, DType::fp32);
  EXPECT_EQ(plan(cpu_spec(), Backend::cuda)[0].problem.dtype, DType::fp16);
}

TEST(Plan, KnobsAreDefaults) {
  const auto cases = plan(cpu_spec(), Backend::cpu);
  EXPECT_TRUE(cases[0].knobs.empty());  // cpu.reference has no knobs
  EXPECT_EQ(cases[1].knobs, (Knobs{{"block_k", 64}, {"block_q", 64}}));
}

TEST(Plan, SkipReasons) {
  SweepSpec s = cpu_spec();
  s.kernels = {"cpu.flash"};
  // Backend mismatch.
  EXPECT_EQ(plan(s, Backend::cuda)[0].skip_reason, "needs the cpu backend; this run uses cuda");
  // The kernel's own why_not: CPU kernels take fp32 only.
  s.groups[0].dtype = {DType::fp16};
  const std::string fp16 = plan(s, Backend::cpu)[0].skip_reason;
  EXPECT_EQ(fp16.rfind("dtype = fp16: CPU kernels read fp32 inputs", 0), 0u) << fp16;
  // An invalid shape wins over everything else.
  s.groups[0].dtype = {DType::fp32};
  s.groups[0].heads = {6};
  s.groups[0].heads_kv = {4};
  EXPECT_EQ(plan(s, Backend::cuda)[0].skip_reason,
            "heads_kv = 4: must divide heads_q = 6 (GQA/MQA groups query heads evenly)");
}

TEST(Plan, TokensAndHiddenDeriveBatchAndHeads) {
  SweepSpec s = cpu_spec();
  s.kernels = {"cpu.reference"};
  s.groups[0].batch.clear();
  s.groups[0].heads.clear();
  s.groups[0].tokens = 1024;
  s.groups[0].hidden = 256;
  s.groups[0].seq_q = {128, 256};
  s.groups[0].head_dim = {32, 64};
  const auto cases = plan(s, Backend::cpu);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(cases[0].problem.full_label(), "B=8 Hq=8 Sq=128 D=32 fp32 full");
  EXPECT_EQ(cases[1].problem.full_label(), "B=4 Hq=8 Sq=256 D=32 fp32 full");
  EXPECT_EQ(cases[2].problem.full_label(), "B=8 Hq=4 Sq=128 D=64 fp32 full");
  EXPECT_EQ(cases[3].problem.heads_kv, 4);  // defaults to the derived heads

  s.groups[0].seq_q = {128, 300};
  EXPECT_EQ(
      error_of([&] { plan(s, Backend::cpu); }),
      "test: group[0]: tokens = 1024 is not divisible by seq_q = 300 (batch = tokens / seq_q); pick seq "
      "values that divide tokens");
  s.groups[0].seq_q = {128};
  s.groups[0].head_dim = {96};
  EXPECT_EQ(
      error_of([&] { plan(s, Backend::cpu); }),
      "test: group[0]: hidden = 256 is not divisible by head_dim = 96 (heads = hidden / head_dim); pick "
      "head_dim values that divide hidden");
}

TEST(Plan, SpecErrors) {
  SweepSpec s = cpu_spec();
  s.kernels = {"cpu.reference", "fa9.magic"};
  const std::string unknown = error_of([&] { plan(s, Backend::cpu); });
  EXPECT_EQ(unknown.rfind("test: unknown kernel 'fa9.magic'; registered: cpu.reference, cpu.flash", 0), 0u)
      << unknown;
  s.kernels.clear();
  EXPECT_NE(error_of([&] { plan(s, Backend::cpu); }).find("test: no kernels to run"), std::string::npos);
  s.kernels = {"cpu.flash"};
  s.baseline = "cpu.reference";
  EXPECT_EQ(error_of([&] { plan(s, Backend::cpu); }),
            "test: baseline 'cpu.reference' is not one of the kernels of this run");
  s.baseline.clear();
  s.groups[0].seq_q.clear();
  EXPECT_EQ(error_of([&] { plan(s, Backend::cpu); }),
            "test: group[0]: no seq values; set seq (or seq_q) in the preset, or pass --seq");
  s.groups.clear();
  EXPECT_NE(error_of([&] { plan(s, Backend::cpu); }).find("test: no sweep axes"), std::string::npos);
}

TEST(Plan, TooManyCasesIsAnError) {
  SweepSpec s = cpu_spec();
  SweepGroup& g = s.groups[0];
  g.batch.assign(100, 1);
  g.heads.assign(100, 1);
  g.seq_q.assign(101, 1);
  EXPECT_NE(error_of([&] { plan(s, Backend::cpu); }).find("expands to more than 1000000 cases"),
            std::string::npos);
}

TEST(CaseId, PinnedValue) {
  Problem p;
  p.batch = 2;
  p.heads_q = 8;
  p.heads_kv = 2;
  p.seq_q = 128;
  p.seq_kv = 256;
  p.head_dim = 64;
  p.head_dim_v = 64;
  p.dtype = DType::fp16;
  p.causal = true;
  const Knobs knobs{{"block_q", 64}, {"block_k", 64}};
  EXPECT_EQ(canonical_case_text("cpu.flash", knobs, p),
            "case.v1|kernel=cpu.flash|knobs=block_k:64,block_q:64|b=2|hq=8|hkv=2|sq=128|sk=256|d=64|dv=64|"
            "dtype=fp16|causal=1|window=-1,-1|layout=bshd");
  // FNV-1a 64 of the text above, computed independently.
  EXPECT_EQ(make_case_id("cpu.flash", knobs, p), "c89f8f99bd446b91");
  EXPECT_EQ(make_case_id("x", {}, Problem{}), "70b352820af9714f");
  // The pass enters the text only when it is not the forward, so forward ids stay as they were.
  p.pass = Pass::fwd_bwd;
  EXPECT_EQ(canonical_case_text("cpu.flash", knobs, p),
            "case.v1|kernel=cpu.flash|knobs=block_k:64,block_q:64|b=2|hq=8|hkv=2|sq=128|sk=256|d=64|dv=64|"
            "dtype=fp16|causal=1|window=-1,-1|layout=bshd|pass=fwd+bwd");
}

// The pass axis is innermost (a shape's passes are neighbours, sharing inputs and reference), and a
// kernel with no backward is planned as skipped for bwd passes, with the reason.
TEST(Plan, PassAxisIsInnermostAndBackwardlessKernelsAreSkipped) {
  SweepSpec s = cpu_spec();
  s.groups[0].batch = {1};
  s.groups[0].seq_q = {64, 128};
  s.groups[0].pass = {Pass::fwd, Pass::bwd, Pass::fwd_bwd};
  s.kernels = {"cpu.flash"};
  const auto cases = plan(s, Backend::cpu);
  ASSERT_EQ(cases.size(), 6u);
  const Pass order[] = {Pass::fwd, Pass::bwd, Pass::fwd_bwd};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(cases[i].problem.pass, order[i % 3]);
    EXPECT_EQ(cases[i].problem.seq_q, i < 3 ? 64 : 128);
    EXPECT_EQ(cases[i].skip_reason, "");
  }
  EXPECT_EQ(cases[1].problem.full_label(), "B=1 Hq=4 Sq=64 D=32 fp32 full bwd");
  EXPECT_DOUBLE_EQ(cases[1].problem.flops(), 2.5 * cases[0].problem.flops());
  EXPECT_DOUBLE_EQ(cases[2].problem.flops(), 3.5 * cases[0].problem.flops());

  KernelSpec forward_only = *find_kernel("cpu.flash");
  forward_only.backward_why_not = nullptr;
  Problem p = cases[1].problem;
  EXPECT_EQ(backward_why_not(forward_only, p, {}),
            "cpu.flash has no backward pass (pass = bwd); run it with pass = fwd");
}

TEST(CaseId, ChangesWithEveryField) {
  Problem base;
  base.batch = 2;
  base.heads_q = 8;
  base.heads_kv = 8;
  base.seq_q = 128;
  base.seq_kv = 128;
  const Knobs knobs{{"block_q", 64}};
  std::set<std::string> ids{make_case_id("k", knobs, base)};
  auto add = [&](const std::string& kernel, const Knobs& k, const Problem& p) {
    EXPECT_TRUE(ids.insert(make_case_id(kernel, k, p)).second) << canonical_case_text(kernel, k, p);
  };
  add("k2", knobs, base);
  add("k", {{"block_q", 32}}, base);
  add("k", {{"block_k", 64}}, base);
  add("k", {}, base);
  const std::vector<void (*)(Problem&)> edits = {
      [](Problem& p) { p.batch = 3; },
      [](Problem& p) { p.heads_q = 16; },
      [](Problem& p) { p.heads_kv = 4; },
      [](Problem& p) { p.seq_q = 64; },
      [](Problem& p) { p.seq_kv = 256; },
      [](Problem& p) { p.head_dim = 128; },
      [](Problem& p) { p.head_dim_v = 32; },
      [](Problem& p) { p.dtype = DType::bf16; },
      [](Problem& p) { p.causal = true; },
      [](Problem& p) {
        p.window = {64, 0};
      },
      [](Problem& p) {
        p.window = {-1, 0};
      },
      [](Problem& p) { p.pass = Pass::bwd; },
      [](Problem& p) { p.pass = Pass::fwd_bwd; },
  };
  for (auto edit : edits) {
    Problem p = base;
    edit(p);
    add("k", knobs, p);
  }
  EXPECT_EQ(ids.size(), 5u + edits.size());
  EXPECT_EQ(make_case_id("k", knobs, base), make_case_id("k", knobs, base));
  EXPECT_EQ(make_case_id("k", knobs, base).size(), 16u);
}

}  // namespace
}  // namespace attn
