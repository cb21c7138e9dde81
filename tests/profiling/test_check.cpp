// The error metrics, the tolerance rule and seeded inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/api/half_convert.hpp"
#include "profiling/engine/check.hpp"
#include "profiling/engine/inputs.hpp"

namespace attn {
namespace {

TEST(Check, RelL2AndMaxAbs) {
  const std::vector<float> out{1.0f, 2.0f, 2.0f};
  const std::vector<double> ref{1.0, 2.0, 3.0};
  const ErrorStats e = compare_outputs(out, ref);
  EXPECT_DOUBLE_EQ(e.max_abs, 1.0);
  EXPECT_DOUBLE_EQ(e.rel_l2, 1.0 / std::sqrt(14.0));
  EXPECT_EQ(e.nonfinite, 0);
}

TEST(Check, PoisonLeftInOutputNeverPasses) {
  std::vector<float> out{1.0f, std::numeric_limits<float>::quiet_NaN()};
  const std::vector<float> ref{1.0f, 1.0f};
  const CheckVerdict v = evaluate_output(DType::fp16, out, ref, {}, {}, nullptr, "test");
  EXPECT_EQ(v.correctness.nonfinite, 1);
  EXPECT_FALSE(v.correctness.pass);
  EXPECT_NE(v.reason.find("non-finite outputs: 1"), std::string::npos);
}

TEST(Check, ToleranceIsTwiceCudnnWhereCudnnRuns) {
  Correctness c;
  c.rel_l2 = 5e-4;
  const double cudnn = 3e-4;
  apply_tolerance(c, DType::fp16, &cudnn);
  EXPECT_DOUBLE_EQ(c.tol, 6e-4);
  EXPECT_TRUE(c.pass);
  c.rel_l2 = 7e-4;
  apply_tolerance(c, DType::fp16, &cudnn);
  EXPECT_FALSE(c.pass);
  EXPECT_NE(c.tol_rule.find("2x cudnn.sdpa"), std::string::npos);
}

// A cuDNN that is itself outside the dtype bound (a broken path) does not loosen the check.
TEST(Check, CudnnAboveTheBoundIsNotTheBar) {
  Correctness c;
  c.rel_l2 = 0.5;
  const double broken = 1.0;
  apply_tolerance(c, DType::fp16, &broken);
  EXPECT_DOUBLE_EQ(c.tol, dtype_rel_l2_bound(DType::fp16));
  EXPECT_FALSE(c.pass);
  EXPECT_NE(c.tol_rule.find("cudnn.sdpa's own rel_l2 1.00e+00 is above it: not used"), std::string::npos)
      << c.tol_rule;
  GradErrors e, base;
  e.dq.rel_l2 = e.dk.rel_l2 = e.dv.rel_l2 = 0.3;
  base.dq.rel_l2 = base.dk.rel_l2 = base.dv.rel_l2 = 0.9;
  EXPECT_FALSE(evaluate_gradients(DType::bf16, e, &base, "test").dq.pass);
}

TEST(Check, DtypeBoundsWithoutCudnn) {
  EXPECT_DOUBLE_EQ(dtype_rel_l2_bound(DType::fp16), 4.0 / 2048);
  EXPECT_DOUBLE_EQ(dtype_rel_l2_bound(DType::bf16), 4.0 / 256);
  Correctness c;
  c.rel_l2 = 1e-5;
  apply_tolerance(c, DType::fp32, nullptr);
  EXPECT_TRUE(c.pass);
  EXPECT_DOUBLE_EQ(c.tol, 2e-5);
}

TEST(Check, LseMinusInfMustMatch) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> ref{-inf, 1.0};
  EXPECT_EQ(compare_lse(std::vector<float>{-std::numeric_limits<float>::infinity(), 1.0f}, ref).nonfinite, 0);
  EXPECT_EQ(compare_lse(std::vector<float>{0.0f, 1.0f}, ref).nonfinite, 1);
  EXPECT_NEAR(compare_lse(std::vector<float>{-std::numeric_limits<float>::infinity(), 1.5f}, ref).max_abs,
              0.5, 1e-12);
}

TEST(Inputs, DeterministicNonZeroAndRoundedToDtype) {
  Problem p;
  p.batch = 2;
  p.heads_q = 4;
  p.heads_kv = 2;
  p.seq_q = 33;
  p.seq_kv = 17;
  p.head_dim = 16;
  p.head_dim_v = 8;
  p.dtype = DType::bf16;
  const HostInputs a = generate_inputs(p, 42), b = generate_inputs(p, 42), c = generate_inputs(p, 43);
  EXPECT_EQ(a.q, b.q);
  EXPECT_NE(a.q, c.q);
  EXPECT_EQ(a.k.size(), static_cast<std::size_t>(p.k_elems()));
  EXPECT_EQ(a.v.size(), static_cast<std::size_t>(p.v_elems()));
  EXPECT_NE(std::vector<float>(a.q.begin(), a.q.begin() + 8),
            std::vector<float>(a.k.begin(), a.k.begin() + 8));
  double sum = 0, sum2 = 0;
  int zeros = 0;
  for (float x : a.q) {
    EXPECT_EQ(x, round_to(DType::bf16, x));
    zeros += x == 0.0f;
    sum += x;
    sum2 += static_cast<double>(x) * x;
  }
  const double n = static_cast<double>(a.q.size());
  EXPECT_EQ(zeros, 0);
  EXPECT_NEAR(sum / n, 0.0, 0.1);  // standard normal
  EXPECT_NEAR(sum2 / n, 1.0, 0.15);
}

TEST(Inputs, PackUnpackRoundTrip) {
  const std::vector<float> v{1.0f, -0.5f, 3.140625f, 0.0009765625f};
  for (DType t : {DType::fp16, DType::bf16, DType::fp32}) {
    const auto bytes = pack_as(t, v);
    EXPECT_EQ(bytes.size(), v.size() * dtype_bytes(t));
    EXPECT_EQ(unpack_from(t, bytes.data(), v.size()), v);
  }
}

}  // namespace
}  // namespace attn
