// cuda.reference's backward (cuda_reference_backward.cu), called by the kernel's run_backward.
#pragma once
#include <cstddef>
#include <string>

#include "kernels/api/kernel_spec.hpp"

namespace attn {

// Widest D or Dv the backward's warps hold in registers.
inline constexpr int kReferenceBackwardMaxDim = 512;

// Empty when the backward takes `p`; otherwise why not, naming the field.
std::string reference_backward_why_not(const Problem& p);

// Workspace: D_i = dO_i . O_i per query row, fp32 [B, Hq, Sq].
inline std::size_t reference_backward_workspace(const Problem& p) {
  return static_cast<std::size_t>(p.lse_elems()) * sizeof(float);
}

// Enqueues the three kernels on a.stream (dots, dQ, dK/dV); a.workspace holds the row dots.
void reference_backward(const Problem& p, const BackwardArgs& a);

}  // namespace attn
