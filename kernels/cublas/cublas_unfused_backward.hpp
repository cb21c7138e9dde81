// cublas.unfused's backward: the standard (materialised) attention backward of the FlashAttention
// papers' "standard attention" and PyTorch's math backend, on cuBLAS.
#pragma once
#include <cublas_v2.h>

#include <cstddef>

#include "kernels/api/kernel_spec.hpp"

namespace attn {

// The backward's workspace [bytes] (dP, dS, per-query-head dK and dV, pointer arrays, cuBLAS's own).
std::size_t cublas_backward_workspace(const Problem& p);

// Enqueues the backward on a.stream with `handle`; `p_forward` is the forward's P [B*Hq, Sq, Sk] in
// the input dtype (kept in the forward's workspace). a.workspace holds cublas_backward_workspace(p).
void cublas_unfused_backward(cublasHandle_t handle, const Problem& p, const void* p_forward,
                             const BackwardArgs& a);

}  // namespace attn
