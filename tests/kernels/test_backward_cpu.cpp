// The backward on the CPU: the oracle's gradients against finite differences of its own forward
// (fp64), cpu.flash's FA2 backward against the oracle, zero gradients for rows that see no key, and
// a planted gradient bug caught by the engine's check.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "kernels/cpu/cpu_reference.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/check.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/engine/inputs.hpp"
#include "tests/support/conformance.hpp"

namespace attn {
namespace {

// A conformance shape (batch 2, fp32 on the CPU) for the backward.
Problem shape(std::int64_t hq, std::int64_t hkv, std::int64_t sq, std::int64_t sk, std::int64_t d,
              bool causal, Window w = {}) {
  Problem p = test::conformance_problem(hq, hkv, sq, sk, d, DType::fp32, causal, w);
  p.pass = Pass::bwd;
  return p;
}

struct Grads {
  std::vector<double> dq, dk, dv;
};

Grads reference_grads(const Problem& p, const HostInputs& in, const std::vector<float>& d_o) {
  Grads g{std::vector<double>(static_cast<std::size_t>(p.q_elems())),
          std::vector<double>(static_cast<std::size_t>(p.k_elems())),
          std::vector<double>(static_cast<std::size_t>(p.v_elems()))};
  cpu_reference_backward(p, in.q.data(), in.k.data(), in.v.data(), d_o.data(), p.default_scale(), g.dq.data(),
                         g.dk.data(), g.dv.data());
  return g;
}

// L = sum(dO * O(q, k, v)) in fp64.
double loss(const Problem& p, const HostInputs& in, const std::vector<float>& d_o) {
  std::vector<double> o(static_cast<std::size_t>(p.o_elems()));
  cpu_reference_attention(p, in.q.data(), in.k.data(), in.v.data(), p.default_scale(), o.data(), nullptr);
  double l = 0;
  for (std::size_t i = 0; i < o.size(); ++i) l += o[i] * d_o[i];
  return l;
}

// Central differences of every input element: h = 2^-10 is exact on values of magnitude < 2^13, so
// the step is exactly 2h and the error is the O(h^2) truncation alone.
void expect_matches_finite_differences(const Problem& p) {
  SCOPED_TRACE(p.full_label());
  HostInputs in = generate_inputs(p, 11);
  const std::vector<float> d_o = generate_output_gradient(p, 11);
  const Grads g = reference_grads(p, in, d_o);
  const float h = std::ldexp(1.0f, -10);
  auto check = [&](std::vector<float>& x, const std::vector<double>& grad, const char* name) {
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float keep = x[i];
      x[i] = keep + h;
      const double up = loss(p, in, d_o);
      x[i] = keep - h;
      const double down = loss(p, in, d_o);
      x[i] = keep;
      const double fd = (up - down) / (2.0 * static_cast<double>(h));
      worst = std::max(worst, std::abs(fd - grad[i]));
      scale = std::max(scale, std::abs(grad[i]));
    }
    EXPECT_LT(worst, 1e-5 * std::max(1.0, scale)) << name << ": largest |finite difference - gradient|";
  };
  check(in.q, g.dq, "dQ");
  check(in.k, g.dk, "dK");
  check(in.v, g.dv, "dV");
}

TEST(ReferenceBackward, MatchesFiniteDifferences) {
  expect_matches_finite_differences(shape(4, 2, 5, 7, 4, false));
  expect_matches_finite_differences(shape(4, 2, 7, 5, 4, true));                 // two rows see no key
  expect_matches_finite_differences(shape(2, 1, 6, 6, 3, false, Window{2, 1}));  // MQA, two-sided window
  expect_matches_finite_differences(shape(2, 2, 6, 9, 5, true, Window{3, -1}));
}

TEST(ReferenceBackward, RowsThatSeeNoKeyGiveZeroGradientsNeverNaN) {
  const Problem p = shape(2, 1, 9, 4, 8, true);  // query rows 0..4 see no key (bottom-right diagonal)
  const HostInputs in = generate_inputs(p, 3);
  const Grads g = reference_grads(p, in, generate_output_gradient(p, 3));
  for (double x : g.dq) ASSERT_TRUE(std::isfinite(x));
  for (double x : g.dk) ASSERT_TRUE(std::isfinite(x));
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < 5; ++i)
      for (std::int64_t d = 0; d < p.head_dim; ++d)
        EXPECT_EQ(g.dq[static_cast<std::size_t>(((b * p.seq_q + i) * p.heads_q) * p.head_dim + d)], 0.0);
}

struct FlashCase {
  Problem p;
  int block_q, block_k;
};

class CpuFlashBackward : public ::testing::TestWithParam<FlashCase> {};

TEST_P(CpuFlashBackward, MatchesTheOracle) {
  const auto& [p, bq, bk] = GetParam();
  SCOPED_TRACE(p.full_label());
  const HostInputs in = generate_inputs(p, 5);
  const std::vector<float> d_o = generate_output_gradient(p, 5);
  const Grads ref = reference_grads(p, in, d_o);

  const KernelSpec* flash = find_kernel("cpu.flash");
  ASSERT_NE(flash, nullptr);
  const Knobs knobs{{"block_q", bq}, {"block_k", bk}};
  ASSERT_EQ(backward_why_not(*flash, p, knobs), "");
  auto kernel = flash->prepare(p, knobs);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> o(static_cast<std::size_t>(p.o_elems()), nan),
      lse(static_cast<std::size_t>(p.lse_elems()), nan);
  std::vector<float> dq(static_cast<std::size_t>(p.q_elems()), nan),
      dk(static_cast<std::size_t>(p.k_elems()), nan), dv(static_cast<std::size_t>(p.v_elems()), nan);
  AttentionArgs a;
  a.q = in.q.data();
  a.k = in.k.data();
  a.v = in.v.data();
  a.o = o.data();
  a.lse = lse.data();
  a.scale = static_cast<float>(p.default_scale());
  kernel->run(a);
  kernel->run_backward({.q = a.q,
                        .k = a.k,
                        .v = a.v,
                        .o = o.data(),
                        .d_o = d_o.data(),
                        .lse = lse.data(),
                        .dq = dq.data(),
                        .dk = dk.data(),
                        .dv = dv.data(),
                        .scale = a.scale});
  const double bound = grad_rel_l2_bound(DType::fp32);
  for (const auto& [name, out, want] :
       {std::tuple{"dQ", &dq, &ref.dq}, {"dK", &dk, &ref.dk}, {"dV", &dv, &ref.dv}}) {
    const ErrorStats e = compare_outputs(*out, *want);
    EXPECT_EQ(e.nonfinite, 0) << name;
    EXPECT_LT(e.rel_l2, bound) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CpuFlashBackward,
    ::testing::Values(FlashCase{shape(4, 4, 1, 1, 32, false), 64, 64},
                      FlashCase{shape(4, 4, 17, 17, 32, true), 16, 16},
                      FlashCase{shape(4, 2, 130, 130, 64, true), 32, 64},  // GQA, ragged tiles
                      FlashCase{shape(4, 1, 100, 37, 16, false), 16, 32},  // MQA, Sq > Sk
                      FlashCase{shape(4, 2, 37, 100, 16, true), 64, 16},   // Sq < Sk
                      FlashCase{shape(4, 4, 130, 90, 16, true), 16, 16},   // 40 rows see no key
                      FlashCase{shape(2, 2, 150, 150, 16, false, Window{64, 0}), 32, 32},
                      FlashCase{shape(2, 1, 300, 300, 16, false, Window{128, 128}), 64, 64}));

// The check catches a backward whose dK of one head is 1% off, and names dK.
TEST(BackwardCheck, APlantedGradientBugIsCaught) {
  register_debug_kernels(Backend::cpu);
  Protocol protocol;
  protocol.max_time_s = 0.01;
  protocol.metrics = "none";
  const auto engine = make_engine(Backend::cpu, protocol);
  Case c;
  c.kernel = "debug.wrong_grad";
  c.problem = shape(4, 2, 33, 33, 16, true);
  const CaseResult r = engine->run(c);
  EXPECT_EQ(r.status, Status::mismatch);
  EXPECT_NE(r.reason.find("dK"), std::string::npos) << r.reason;
  ASSERT_TRUE(r.grad_dk && r.grad_dq && r.grad_dv);
  EXPECT_FALSE(r.grad_dk->pass);
  EXPECT_TRUE(r.grad_dq->pass);
  EXPECT_TRUE(r.grad_dv->pass);
  EXPECT_GT(r.grad_dk->rel_l2, 1e-3);
  ASSERT_TRUE(r.correctness);
  EXPECT_TRUE(r.correctness->pass);  // the forward is right: only the gradient check can see it

  c.problem.pass = Pass::fwd;  // the same kernel passes a forward-only case
  EXPECT_EQ(engine->run(c).status, Status::ok);
}

// A bwd case times the backward alone; fwd+bwd counts 3.5x the forward's FLOPs and both passes' bytes.
TEST(BackwardEngine, PassesAreCheckedTimedAndCounted) {
  Protocol protocol;
  protocol.max_time_s = 0.01;
  protocol.metrics = "none";
  const auto engine = make_engine(Backend::cpu, protocol);
  for (const Pass pass : {Pass::fwd, Pass::bwd, Pass::fwd_bwd}) {
    Case c;
    c.kernel = "cpu.flash";
    c.problem = shape(4, 2, 64, 80, 32, true);
    c.problem.pass = pass;
    const CaseResult r = engine->run(c);
    ASSERT_EQ(r.status, Status::ok) << r.reason;
    EXPECT_DOUBLE_EQ(r.flops, c.problem.forward_flops() * pass_flop_factor(pass));
    EXPECT_EQ(r.grad_dq.has_value(), pass != Pass::fwd);
    if (pass != Pass::fwd) {
      EXPECT_TRUE(r.grad_dq->pass && r.grad_dk->pass && r.grad_dv->pass);
      EXPECT_LT(r.grad_dk->rel_l2, 1e-5);
      EXPECT_EQ(r.grad_dk->reference, "cpu.reference");
    }
    EXPECT_NE(r.nvtx_range.find(pass == Pass::fwd ? "/causal" : "/" + std::string(to_string(pass))),
              std::string::npos)
        << r.nvtx_range;
  }
}

// A kernel without a backward is refused for bwd cases, with the reason naming the pass.
TEST(BackwardEngine, AKernelWithoutABackwardIsSkipped) {
  register_debug_kernels(Backend::cpu);
  const KernelSpec* wrong = find_kernel("debug.wrong");
  ASSERT_NE(wrong, nullptr);
  Problem p = shape(2, 2, 8, 8, 16, false);
  EXPECT_EQ(backward_why_not(*wrong, p, {}),
            "debug.wrong has no backward pass (pass = bwd); run it with pass = fwd");
  Protocol protocol;
  protocol.max_time_s = 0.01;
  const auto engine = make_engine(Backend::cpu, protocol);
  Case c;
  c.kernel = "debug.wrong";
  c.problem = p;
  const CaseResult r = engine->run(c);
  EXPECT_EQ(r.status, Status::skipped);
  EXPECT_NE(r.reason.find("no backward pass"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace attn
