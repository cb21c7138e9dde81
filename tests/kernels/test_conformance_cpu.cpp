// The conformance suite on the CPU backend: every registered CPU kernel (kernels/registry.def)
// over the matrix of tests/support/conformance.hpp in fp32, through the CPU engine and its check.
// Runs in CI without a GPU; the GPU half is tests/gpu/test_conformance.cpp.
#include <gtest/gtest.h>

#include <memory>

#include "tests/support/conformance.hpp"

namespace attn {
namespace {

class ConformanceCpu : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceCpu, EveryCaseIsCorrectOrRefused) {
  const std::unique_ptr<CaseEngine> engine = make_engine(Backend::cpu, test::conformance_protocol());
  test::run_conformance(*engine, GetParam(), {DType::fp32});
}

TEST_P(ConformanceCpu, EveryKnobValueIsCorrectOrRefused) {
  const std::unique_ptr<CaseEngine> engine = make_engine(Backend::cpu, test::conformance_protocol());
  test::run_knob_conformance(*engine, GetParam(), {DType::fp32});
}

TEST_P(ConformanceCpu, EveryGradientIsCorrectOrRefused) {
  const KernelSpec* spec = find_kernel(GetParam());
  ASSERT_NE(spec, nullptr);
  if (!spec->backward_why_not) GTEST_SKIP() << GetParam() << " declares no backward";
  const std::unique_ptr<CaseEngine> engine = make_engine(Backend::cpu, test::conformance_protocol());
  const test::ConformanceCounts n =
      test::run_conformance(*engine, GetParam(), {}, test::backward_matrix({DType::fp32}, false));
  EXPECT_GT(n.pass, 0);
}

INSTANTIATE_TEST_SUITE_P(Registry, ConformanceCpu,
                         ::testing::ValuesIn(test::registered_kernels(Backend::cpu)), test::kernel_test_name);

// The matrix holds what the issue asks of it, so a shrinking matrix fails here.
TEST(ConformanceMatrix, CoversOddShapesGqaMasksAndBothHalfDtypes) {
  const auto m = test::conformance_matrix({DType::fp16, DType::bf16});
  bool s1 = false, s17 = false, s130 = false, s257 = false, gqa = false, mqa = false, causal = false,
       window = false, compressed = false, selected = false, varlen = false, sq_lt_sk = false,
       sq_gt_sk = false, fp16 = false, bf16 = false;
  for (const auto& c : m) {
    const Problem& p = c.problem;
    EXPECT_EQ(p.validate(), "") << c.name;
    s1 |= p.seq_q == 1;
    s17 |= p.seq_q == 17;
    s130 |= p.seq_q == 130;
    s257 |= p.seq_q == 257;
    gqa |= p.heads_kv > 1 && p.heads_kv < p.heads_q;
    mqa |= p.heads_kv == 1;
    causal |= p.causal;
    window |= p.window.active() && !p.causal;
    compressed |= p.compress.active();
    selected |= p.select.active();
    varlen |= p.varlen.active();
    sq_lt_sk |= p.seq_q < p.seq_kv;
    sq_gt_sk |= p.seq_q > p.seq_kv;
    fp16 |= p.dtype == DType::fp16;
    bf16 |= p.dtype == DType::bf16;
  }
  EXPECT_TRUE(s1 && s17 && s130 && s257 && gqa && mqa && causal && window && compressed && selected &&
              varlen && sq_lt_sk && sq_gt_sk && fp16 && bf16);
}

// The knob variants are the non-default declared values, one knob at a time.
TEST(ConformanceMatrix, KnobVariantsAreTheNonDefaultValues) {
  const KernelSpec* flash = find_kernel("cpu.flash");
  ASSERT_NE(flash, nullptr);
  const std::vector<Knobs> v = test::knob_variants(*flash);
  ASSERT_EQ(v.size(), 6u);  // block_q and block_k: {16, 32, 64, 128} less the default 64
  EXPECT_EQ(v.front(), (Knobs{{"block_q", 16}}));
  EXPECT_EQ(v.back(), (Knobs{{"block_k", 128}}));
  EXPECT_EQ(test::knob_matrix({DType::fp32}).size(), 4u);
}

// A kernel that computes the wrong answer fails the suite: debug.wrong (kernels/debug/) through
// the same runner records a failure rather than passing silently.
TEST(ConformanceCpu, AWrongKernelFails) {
  register_debug_kernels(Backend::cpu);
  const std::unique_ptr<CaseEngine> engine = make_engine(Backend::cpu, test::conformance_protocol());
  Case c;
  c.kernel = "debug.wrong";
  c.problem = test::conformance_problem(4, 2, 17, 130, 64, DType::fp32, true);
  const CaseResult r = engine->run(c);
  EXPECT_EQ(r.status, Status::mismatch) << r.reason;
}

}  // namespace
}  // namespace attn
