// The error bound ffpa.l1.acc_f16 states (its fp16 accumulation costs precision by design), as a
// function of the problem. Host-only; docs/kernels/ffpa.md derives it and the GPU tests check it.
//
// Model (unit-variance inputs, u = 2^-11): the dtype bound 4u of every fp16 kernel, plus
//  - S accumulated in fp16: each k16 step rounds a partial dot product of scaled size ~1, so a
//    logit carries ~u sqrt(D/16) error, and O's relative error follows the logits' (the weights'
//    relative perturbation): c_s u sqrt(D/16);
//  - O kept in fp16 and refolded once per 64-key tile: a rounding made at tile t is damped by the
//    later folds by t/T, so T tiles add u sqrt(T/3) in quadrature; the per-tile fp16 P.V adds a
//    similar term: c_o u sqrt(Sk/64).
// c_s = c_o = 1: on the H100 the measured error stays under half of this bound (docs/VALIDATION.md).
#pragma once
#include <cmath>
#include <string>

#include "kernels/api/kernel_spec.hpp"

namespace attn::ffpa {

inline StatedBound acc_f16_error_bound(const Problem& p) {
  const double u = std::ldexp(1.0, -11);
  const double d = static_cast<double>(p.head_dim);
  const double keys = static_cast<double>(std::max<std::int64_t>(p.seq_kv, 1));
  StatedBound b;
  b.rel_l2 = u * (4.0 + std::sqrt(d / 16.0) + std::sqrt(keys / 64.0));
  // The LSE averages the logit errors over the keys; bounded by the worst logit error plus 8u.
  b.lse_abs = u * (8.0 + 4.0 * std::sqrt(d / 16.0));
  b.why = "fp16 accumulation: u (4 + sqrt(D/16) + sqrt(Sk/64)), u = 2^-11";
  return b;
}

}  // namespace attn::ffpa
