// Error metrics and the documented tolerance rule.
#include "profiling/engine/check.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <utility>

namespace attn {

namespace {
template <class Ref>
ErrorStats compare_impl(std::span<const float> out, std::span<const Ref> ref) {
  ErrorStats e;
  double diff2 = 0, ref2 = 0;
  const std::size_t n = std::min(out.size(), ref.size());
  for (std::size_t i = 0; i < n; ++i) {
    const double o = out[i];
    const double r = static_cast<double>(ref[i]);
    if (!std::isfinite(o)) {
      ++e.nonfinite;
      continue;
    }
    const double d = o - r;
    diff2 += d * d;
    ref2 += r * r;
    e.max_abs = std::max(e.max_abs, std::abs(d));
  }
  if (e.nonfinite > 0) {
    e.rel_l2 = std::numeric_limits<double>::infinity();
    e.max_abs = std::numeric_limits<double>::infinity();
  } else {
    e.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  }
  return e;
}
}  // namespace

ErrorStats compare_outputs(std::span<const float> out, std::span<const double> ref) {
  return compare_impl(out, ref);
}
ErrorStats compare_outputs(std::span<const float> out, std::span<const float> ref) {
  return compare_impl(out, ref);
}

ErrorStats compare_lse(std::span<const float> out, std::span<const double> ref) {
  ErrorStats e;
  const std::size_t n = std::min(out.size(), ref.size());
  for (std::size_t i = 0; i < n; ++i) {
    const double o = out[i], r = ref[i];
    if (std::isinf(r) && r < 0) {
      if (!(std::isinf(o) && o < 0)) ++e.nonfinite;
      continue;
    }
    if (!std::isfinite(o)) {
      ++e.nonfinite;
      continue;
    }
    e.max_abs = std::max(e.max_abs, std::abs(o - r));
  }
  return e;
}

double dtype_rel_l2_bound(DType t) {
  // Unit roundoff u: fp16 2^-11, bf16 2^-8. Rounding O alone costs ~u/sqrt(3) rel L2, rounding P
  // before P.V about the same again; 4u leaves headroom for fp32 accumulation order. fp32 kernels
  // accumulate over up to 64k keys: sqrt(64k) * 2^-24 ~ 1.5e-5, so 2e-5.
  switch (t) {
    case DType::fp16:
      return 4.0 * std::ldexp(1.0, -11);
    case DType::bf16:
      return 4.0 * std::ldexp(1.0, -8);
    case DType::fp32:
      return 2e-5;
  }
  return 0;
}

double grad_rel_l2_bound(DType t) { return 2.0 * dtype_rel_l2_bound(t); }

double lse_abs_tolerance(DType t) { return 8.0 * dtype_rel_l2_bound(t); }

void apply_tolerance(Correctness& c, DType t, const double* cudnn_rel_l2) {
  const double bound = dtype_rel_l2_bound(t);
  // cuDNN's error sets the bar only while cuDNN itself is within the dtype bound: a cuDNN path that
  // computes the wrong thing (a new feature, a library bug) must not loosen every kernel's check.
  if (cudnn_rel_l2 && std::isfinite(*cudnn_rel_l2) && *cudnn_rel_l2 <= bound) {
    c.tol = std::max(2.0 * *cudnn_rel_l2, 0.25 * bound);
    c.tol_rule = fmt::format("2x cudnn.sdpa (rel_l2 {:.2e}), floor {:.2e}", *cudnn_rel_l2, 0.25 * bound);
  } else {
    c.tol = bound;
    c.tol_rule = fmt::format("{} bound {:.2e}", to_string(t), bound);
    if (cudnn_rel_l2 && std::isfinite(*cudnn_rel_l2))
      c.tol_rule += fmt::format(" (cudnn.sdpa's own rel_l2 {:.2e} is above it: not used)", *cudnn_rel_l2);
  }
  c.pass = c.nonfinite == 0 && std::isfinite(c.rel_l2) && c.rel_l2 <= c.tol;
}

void apply_stated_bound(Correctness& c, const StatedBound& stated) {
  if (stated.rel_l2 > c.tol) {
    c.tol = stated.rel_l2;
    c.tol_rule = fmt::format("stated bound {:.2e}: {}", stated.rel_l2, stated.why);
  }
  c.pass = c.nonfinite == 0 && std::isfinite(c.rel_l2) && c.rel_l2 <= c.tol;
}

CheckVerdict evaluate_output(DType t, std::span<const float> out, std::span<const float> ref_o,
                             std::span<const float> lse, std::span<const double> ref_lse,
                             const double* cudnn_rel_l2, std::string reference_name,
                             const StatedBound* stated) {
  return evaluate_output(t, compare_outputs(out, ref_o), lse, ref_lse, cudnn_rel_l2,
                         std::move(reference_name), stated);
}

CheckVerdict evaluate_output(DType t, const ErrorStats& e, std::span<const float> lse,
                             std::span<const double> ref_lse, const double* cudnn_rel_l2,
                             std::string reference_name, const StatedBound* stated) {
  CheckVerdict v;
  Correctness& c = v.correctness;
  c.max_abs = e.max_abs;
  c.rel_l2 = e.rel_l2;
  c.nonfinite = e.nonfinite;
  c.reference = std::move(reference_name);
  apply_tolerance(c, t, cudnn_rel_l2);
  if (stated) apply_stated_bound(c, *stated);
  if (!c.pass) {
    v.reason = fmt::format("rel_l2 {:.3e} > tol {:.3e} ({}); non-finite outputs: {}", c.rel_l2, c.tol,
                           c.tol_rule, c.nonfinite);
    return v;
  }
  if (!lse.empty()) {
    const ErrorStats le = compare_lse(lse, ref_lse);
    const double lse_tol = stated ? std::max(stated->lse_abs, lse_abs_tolerance(t)) : lse_abs_tolerance(t);
    if (le.nonfinite > 0 || le.max_abs > lse_tol) {
      c.pass = false;
      v.reason =
          fmt::format("LSE differs from the reference: max abs {:.3e} (tol {:.3e}), mismatched non-finite {}",
                      le.max_abs, lse_tol, le.nonfinite);
    }
  }
  return v;
}

bool record_gradients(CaseResult& r, GradVerdict v) {
  r.grad_dq = std::move(v.dq);
  r.grad_dk = std::move(v.dk);
  r.grad_dv = std::move(v.dv);
  if (v.reason.empty()) return true;
  r.status = Status::mismatch;
  r.reason = std::move(v.reason);
  return false;
}

GradVerdict evaluate_gradients(DType t, const GradErrors& e, const GradErrors* cudnn,
                               const std::string& reference_name) {
  GradVerdict v;
  const double bound = grad_rel_l2_bound(t);
  auto one = [&](const char* name, const ErrorStats& err, const ErrorStats* base, Correctness& c) {
    c.max_abs = err.max_abs;
    c.rel_l2 = err.rel_l2;
    c.nonfinite = err.nonfinite;
    c.reference = reference_name;
    if (base && std::isfinite(base->rel_l2) && base->rel_l2 <= bound) {  // as apply_tolerance
      c.tol = std::max(2.0 * base->rel_l2, 0.25 * bound);
      c.tol_rule = fmt::format("2x cudnn.sdpa (rel_l2 {:.2e}), floor {:.2e}", base->rel_l2, 0.25 * bound);
    } else {
      c.tol = bound;
      c.tol_rule = fmt::format("{} gradient bound {:.2e}", to_string(t), bound);
    }
    c.pass = c.nonfinite == 0 && std::isfinite(c.rel_l2) && c.rel_l2 <= c.tol;
    if (!c.pass && v.reason.empty())
      v.reason = fmt::format("{}: rel_l2 {:.3e} > tol {:.3e} ({}); non-finite values: {}", name, c.rel_l2,
                             c.tol, c.tol_rule, c.nonfinite);
  };
  one("dQ", e.dq, cudnn ? &cudnn->dq : nullptr, v.dq);
  one("dK", e.dk, cudnn ? &cudnn->dk : nullptr, v.dk);
  one("dV", e.dv, cudnn ? &cudnn->dv : nullptr, v.dv);
  return v;
}

}  // namespace attn
