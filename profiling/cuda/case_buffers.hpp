// The device side of one kernel run: its output, LSE and workspace buffers, the NaN poison, the
// argument block, and typed host <-> device copies ordered on the run's stream (transfer.hpp).
// Shared by the engine's stages and the GPU test harness, so both run a kernel the same way.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "profiling/cuda/device_buffer.hpp"

namespace attn {

struct CaseBuffers {
  DeviceBuffer o, lse, workspace;
  // Passes with a backward: the gradients (the shapes of Q, K, V) and the backward's workspace.
  DeviceBuffer dq, dk, dv, backward_workspace;
  Pass pass = Pass::fwd;
};

// O in `p.dtype`, LSE (fp32) when the kernel writes it, and the kernel's workspace; for a pass with
// a backward also dQ, dK, dV and its workspace. Throws CudaError (out_of_memory) when they do not fit.
CaseBuffers allocate_case_buffers(const Problem& p, const PreparedKernel& kernel);

// 0xFF bytes are NaN in fp16, bf16 and fp32 alike: any element the kernel leaves unwritten shows.
// What the pass writes is poisoned: O and LSE for a forward, the gradients for a backward (a bwd
// pass reads the forward's O and LSE, which stay).
void poison(const CaseBuffers& b, cudaStream_t stream);

AttentionArgs make_args(const Problem& p, const void* q, const void* k, const void* v, const CaseBuffers& b,
                        cudaStream_t stream);
// The backward's arguments over the forward's `args` (Q, K, V, O, LSE), `d_o` and b's gradients.
BackwardArgs make_backward_args(const AttentionArgs& args, const void* d_o, const CaseBuffers& b);

// `values` packed as `t` (fp16/bf16 bits, or fp32) in a new device buffer; complete on return.
DeviceBuffer upload(const std::vector<float>& values, DType t, cudaStream_t stream);
// `count` elements of type `t` read back as fp32, after the work enqueued on `stream`.
std::vector<float> download(const DeviceBuffer& b, DType t, std::size_t count, cudaStream_t stream);

// Enqueues `kernel`'s forward once on poisoned O and LSE and waits for it: the check run.
void run_once(PreparedKernel& kernel, const AttentionArgs& args, const CaseBuffers& b);
// The same for its backward, on poisoned dQ, dK, dV and backward workspace (O and LSE are the
// forward's).
void run_backward_once(PreparedKernel& kernel, const BackwardArgs& args, const CaseBuffers& b);

}  // namespace attn
