// Correctness check of a kernel's output against a reference, and the tolerance rule.
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "kernels/api/dtype.hpp"
#include "kernels/api/kernel_spec.hpp"
#include "profiling/result.hpp"

namespace attn {

struct ErrorStats {
  double max_abs = 0;
  double rel_l2 = 0;  // ||out - ref||_2 / ||ref||_2 (abs L2 when ref is all zeros)
  std::int64_t nonfinite = 0;
};

// Non-finite outputs (NaN poison left unwritten, inf) make rel_l2 infinite: they never pass.
ErrorStats compare_outputs(std::span<const float> out, std::span<const double> ref);
ErrorStats compare_outputs(std::span<const float> out, std::span<const float> ref);

// LSE rows: where the reference is -inf (no visible key) the kernel must write -inf too; any
// other mismatch in infinity or a NaN counts as non-finite. max_abs over the finite rows.
ErrorStats compare_lse(std::span<const float> out, std::span<const double> ref);

// Absolute bound on LSE error [natural-log units]: 8 units of the dtype's rel_l2 bound, since
// logits carry the inputs' rounding scaled by |q||k|/sqrt(D) ~ a few units.
double lse_abs_tolerance(DType t);

// Bound on rel_l2 for a kernel of this dtype when no same-precision library baseline exists:
// 4 units of roundoff of the dtype (see docs/VALIDATION.md "Tolerance rule").
double dtype_rel_l2_bound(DType t);

// The tolerance rule: 2x the rel L2 error of cudnn.sdpa on the same inputs where cuDNN takes the
// case (floored at a quarter of the dtype bound so a lucky cuDNN run cannot make it unmeetable),
// else the dtype bound. Fills tol, tol_rule and pass.
void apply_tolerance(Correctness& c, DType t, const double* cudnn_rel_l2);

// A kernel's own stated bound replaces the rule (tol_rule says so); it is never tighter than the
// rule would be, so a stated bound can only admit a kernel's documented extra error.
void apply_stated_bound(Correctness& c, const StatedBound& stated);

// The whole check of one run: output error against the reference, the tolerance rule (or the
// kernel's stated bound), and the LSE (when the kernel writes it). `reason` is empty when it
// passes, else says what failed.
struct CheckVerdict {
  Correctness correctness;
  std::string reason;
};
CheckVerdict evaluate_output(DType t, std::span<const float> out, std::span<const float> ref_o,
                             std::span<const float> lse, std::span<const double> ref_lse,
                             const double* cudnn_rel_l2, std::string reference_name,
                             const StatedBound* stated = nullptr);
// The same rule on error statistics computed elsewhere (on the device).
CheckVerdict evaluate_output(DType t, const ErrorStats& e, std::span<const float> lse,
                             std::span<const double> ref_lse, const double* cudnn_rel_l2,
                             std::string reference_name, const StatedBound* stated = nullptr);

// Bound on a gradient's rel_l2 where no same-precision library baseline exists: twice the output's
// (dS = P * (dP - D) cancels, and dK, dV sum over every query that sees a key; see
// docs/VALIDATION.md "Gradients").
double grad_rel_l2_bound(DType t);

// The check of a backward's dQ, dK and dV, each under the rule of O: 2x cudnn.sdpa's error on that
// gradient where cuDNN runs the case (`cudnn_rel_l2` = {dq, dk, dv}, null when it does not), else
// grad_rel_l2_bound. `reason` names the first gradient that fails, empty when all pass.
struct GradErrors {
  ErrorStats dq, dk, dv;
};
struct GradVerdict {
  Correctness dq, dk, dv;
  std::string reason;
};
GradVerdict evaluate_gradients(DType t, const GradErrors& e, const GradErrors* cudnn,
                               const std::string& reference_name);

// Puts the verdict in the record (grad_check.*); a failure makes it `mismatch` with the reason.
// Returns whether every gradient passed.
bool record_gradients(CaseResult& r, GradVerdict v);

}  // namespace attn
