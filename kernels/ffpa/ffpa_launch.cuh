// ffpa.l1 launch template: turns the runtime stage count and Q residency into template constants.
// Included only by the instantiation files in inst/.
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/ffpa/ffpa_kernel.cuh"
#include "kernels/ffpa/ffpa_launch.hpp"
#include "kernels/ffpa/ffpa_traits.hpp"

namespace attn::ffpa {

template <typename T, typename Tr>
void launch_ffpa(const FfpaParams& p, cudaStream_t stream) {
  const auto kernel = ffpa_fwd_kernel<T, Tr>;
  // Over 48 KiB of dynamic shared memory needs an opt-in, once per kernel: to the capacity's
  // footprint or, where that exceeds what the GPU allows a block, to that limit (prepare() refuses
  // the head dims that would need more). A launch asks for what its head dim needs.
  static const cudaError_t attr_status = [kernel] {
    int device = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (e != cudaSuccess) return e;
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                Tr::kSmemBytes < optin ? Tr::kSmemBytes : optin);
  }();
  ATTN_CUDA_CHECK(attr_status);
  const int smem = smem_bytes({Tr::kBr, Tr::kBc, 0, Tr::kWarps, Tr::kChunk, Tr::kBr / Tr::kWM}, Tr::kStages,
                              Tr::kQResident, p.head_dim);
  const dim3 grid(static_cast<unsigned>((p.seq_q + Tr::kBr - 1) / Tr::kBr), static_cast<unsigned>(p.heads_q),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, Tr::kThreads, smem, stream>>>(p);
  ATTN_CUDA_CHECK_LAUNCH("ffpa.l1 ffpa_fwd_kernel");
}

template <DType kType, bool kAccF16, int kDMax>
void run_ffpa(const FfpaParams& p, int stages, bool q_resident, void* stream) {
  using T = std::conditional_t<kType == DType::fp16, __half, __nv_bfloat16>;
  static_assert(kType == DType::fp16 || kType == DType::bf16, "ffpa.l1 takes fp16 and bf16");
  static_assert(!kAccF16 || kType == DType::fp16, "fp16 accumulation takes fp16 inputs");
  constexpr FfpaTiles c = compiled_tiles(kAccF16, kDMax)[0];
  if (p.head_dim > kDMax || p.head_dim % 32 != 0)
    throw KernelError("ffpa.l1: head_dim " + std::to_string(p.head_dim) + " does not fit capacity " +
                      std::to_string(kDMax));
  const auto st = static_cast<cudaStream_t>(stream);
  if (stages == 1 && !q_resident)
    launch_ffpa<T, KernelTraits<c.br, c.bc, c.dmax, c.warps, c.warp_rows, c.chunk, 1, kAccF16, false>>(p, st);
  else if (stages == 2 && !q_resident)
    launch_ffpa<T, KernelTraits<c.br, c.bc, c.dmax, c.warps, c.warp_rows, c.chunk, 2, kAccF16, false>>(p, st);
  else if (stages == 1)
    launch_ffpa<T, KernelTraits<c.br, c.bc, c.dmax, c.warps, c.warp_rows, c.chunk, 1, kAccF16, true>>(p, st);
  else if (stages == 2)
    launch_ffpa<T, KernelTraits<c.br, c.bc, c.dmax, c.warps, c.warp_rows, c.chunk, 2, kAccF16, true>>(p, st);
  else
    throw KernelError("ffpa.l1: stages = " + std::to_string(stages) + "; compiled: 1, 2");
}

}  // namespace attn::ffpa
