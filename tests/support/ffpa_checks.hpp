// What the ffpa.l1 and ffpa.wgmma GPU tests share: the (accumulation, dtype) variants every head
// dim is checked in, and a check's tolerance: acc_f16 is held to its stated bound
// (kernels/ffpa/ffpa_accuracy.hpp), acc_f32 to 2x cublas.unfused's error on the same inputs,
// floored at a quarter of the dtype bound. GPU tests only (runs cublas.unfused).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/ffpa/ffpa_accuracy.hpp"
#include "tests/support/kernel_harness.hpp"

namespace attn {
KernelSpec make_cublas_unfused_spec();
}  // namespace attn

namespace attn::test {

struct FfpaVariant {
  const char* tag;  // case-name part: accumulation, then input dtype
  bool acc_f16;
  DType dtype;
};
inline constexpr FfpaVariant kFfpaVariants[] = {
    {"f32_fp16", false, DType::fp16}, {"f32_bf16", false, DType::bf16}, {"f16_fp16", true, DType::fp16}};

// "d<D>_<variant>_": the prefix of a case name.
inline std::string ffpa_case_prefix(int d, const FfpaVariant& v) {
  return "d" + std::to_string(d) + "_" + v.tag + "_";
}

struct FfpaTolerance {
  double rel_l2 = 0.0;
  double lse_abs = 0.0;
  double math_err = std::numeric_limits<double>::quiet_NaN();  // cublas.unfused's rel L2 (acc_f32)
  std::string rule;
};

// Fills `tol` for `p` (check HasFatalFailure() after: cublas.unfused may fail an assertion).
inline void ffpa_tolerance(const Problem& p, bool acc_f16, const Inputs& in, const Oracle& ref,
                           FfpaTolerance& tol) {
  tol.lse_abs = 8.0 * dtype_bound(p.dtype);
  if (acc_f16) {
    const StatedBound b = ffpa::acc_f16_error_bound(p);
    tol.rel_l2 = b.rel_l2;
    tol.lse_abs = std::max(tol.lse_abs, b.lse_abs);
    tol.rule = "stated bound";
    return;
  }
  RunOutput math;
  run_kernel(make_cublas_unfused_spec(), p, {}, in, 0, math);
  if (::testing::Test::HasFatalFailure()) return;
  tol.math_err = compare(p, ref, math).rel_l2;
  ASSERT_TRUE(std::isfinite(tol.math_err)) << "cublas.unfused produced non-finite output";
  tol.rel_l2 = std::max(2.0 * tol.math_err, 0.25 * dtype_bound(p.dtype));
  tol.rule = "2x cublas.unfused";
}

}  // namespace attn::test
