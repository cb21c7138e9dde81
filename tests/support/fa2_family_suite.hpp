// The GPU suite of the fa2 family, shared by the fa2.mma and fa3.wgmma tests: the shapes (S 1, 17,
// 128, 1000, 4097, Sq != Sk both ways, GQA 32/4, MQA, causal, windows (64,0) and (128,128), odd B*H,
// rows that see no key) and the engine's tolerance rule for a fused kernel's O: at most 2x
// cudnn.sdpa's error on the same inputs where cuDNN takes the case (floored at a quarter of the dtype
// bound, for cases where cuDNN is exact-ish), else the dtype bound.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "tests/support/kernel_harness.hpp"

namespace attn {
KernelSpec make_cudnn_sdpa_spec();
}  // namespace attn

namespace attn::test {

struct CudnnTolerance {
  double tol = 0;
  std::string rule;
  double dnn_err = std::numeric_limits<double>::quiet_NaN();
};

// Runs cudnn.sdpa on `run`'s inputs and fills `out`. Fatal failures: callers check HasFatalFailure().
inline void twice_cudnn_tolerance(const Problem& p, const OracleRun& run, CudnnTolerance& out) {
  const KernelSpec dnn = make_cudnn_sdpa_spec();
  out.tol = dtype_bound(p.dtype);
  out.rule = "dtype bound";
  if (!kernel_why_not(dnn, p, {}).empty()) return;
  std::unique_ptr<PreparedKernel> dnn_kernel;
  try {
    dnn_kernel = dnn.prepare(p, {});
  } catch (const Unsupported& e) {
    out.rule = "dtype bound (cudnn.sdpa: ";
    out.rule += e.what();
    out.rule += ')';
    return;
  }
  RunOutput ref_dnn;
  run_prepared(*dnn_kernel, p, run.in, 0, ref_dnn);
  if (::testing::Test::HasFatalFailure()) return;
  out.dnn_err = compare(p, run.ref, ref_dnn).rel_l2;
  if (std::isfinite(out.dnn_err)) {
    out.tol = std::max(2.0 * out.dnn_err, 0.25 * dtype_bound(p.dtype));
    out.rule = "2x cudnn.sdpa";
  }
}

struct NamedProblem {
  std::string name;
  Problem problem;
};

// The prefix of a case name: "d128_fp16_".
inline std::string shape_tag(int d, DType t) {
  std::string tag = "d";
  tag += std::to_string(d);
  tag += '_';
  tag += to_string(t);
  tag += '_';
  return tag;
}

// The shapes for one head dim and dtype; B*H is odd wherever the heads allow it.
inline std::vector<NamedProblem> fa2_family_shapes(int d, DType t) {
  return {
      {"s1", make_problem(1, 3, 3, 1, 1, d, t)},
      {"s1_causal", make_problem(3, 1, 1, 1, 1, d, t, true)},
      {"s17_causal_odd", make_problem(3, 5, 5, 17, 17, d, t, true)},
      {"s128_gqa32_4", make_problem(1, 32, 4, 128, 128, d, t)},
      {"s1000_mqa_causal", make_problem(1, 5, 1, 1000, 1000, d, t, true)},
      {"s1000_win64_0", make_problem(1, 3, 3, 1000, 1000, d, t, false, {64, 0})},
      {"s1000_win128_128_gqa", make_problem(1, 32, 4, 1000, 1000, d, t, false, {128, 128})},
      {"sq1000_sk128_causal", make_problem(1, 3, 1, 1000, 128, d, t, true)},  // 872 rows see no key
      {"sq128_sk1000_causal", make_problem(3, 1, 1, 128, 1000, d, t, true)},
      {"sq17_sk4097_win128_128", make_problem(1, 3, 3, 17, 4097, d, t, false, {128, 128})},
      {"s4097_full", make_problem(1, 3, 3, 4097, 4097, d, t)},
      {"s4097_causal_gqa", make_problem(1, 32, 4, 4097, 4097, d, t, true)},
  };
}

// One case of such a suite: `spec` with `knobs` against the fp64 oracle on inputs the caller built (a
// structured case) or drawn from `seed`, O held to the rule above and LSE to 8x the dtype bound;
// prints the figures under `name`.
inline void expect_within_twice_cudnn(const KernelSpec& spec, const Problem& p, const Knobs& knobs, Inputs in,
                                      const std::string& name) {
  ASSERT_EQ(p.validate(), "");
  OracleRun run;
  run.in = std::move(in);
  run_against_oracle(spec, p, knobs, run);
  if (::testing::Test::HasFatalFailure()) return;
  CudnnTolerance tol;
  twice_cudnn_tolerance(p, run, tol);
  if (::testing::Test::HasFatalFailure()) return;
  std::cout << "[" << spec.id << "] " << name << " (" << p.full_label() << "): rel_l2 " << run.err.rel_l2
            << ", cudnn " << tol.dnn_err << ", tol " << tol.tol << " (" << tol.rule << "), LSE max abs "
            << run.err.lse_max_abs << ", empty rows " << run.empty_rows << ", rows checked "
            << run.ref.rows.size() << "\n";
  EXPECT_LE(run.err.rel_l2, tol.tol) << p.full_label();
  EXPECT_LE(run.err.lse_max_abs, 8.0 * dtype_bound(p.dtype)) << p.full_label();
}

inline void expect_within_twice_cudnn(const KernelSpec& spec, const Problem& p, const Knobs& knobs,
                                      std::uint32_t seed, const std::string& name) {
  expect_within_twice_cudnn(spec, p, knobs, make_inputs(p, seed), name);
}

}  // namespace attn::test
