// The engine's tolerance rule for a fused kernel's O in the GPU suites: at most 2x cudnn.sdpa's error
// on the same inputs where cuDNN takes the case (floored at a quarter of the dtype bound, for cases
// where cuDNN is exact-ish), else the dtype bound. Shared by the fa2.mma and fa3.wgmma suites.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

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

}  // namespace attn::test
