// ffpa.wgmma launch template: the grid (row blocks x passes, heads, batch), the shared-memory
// opt-in, and the switch over Q residency and warpgroups a CTA. Included only by the instantiation files in
// inst/.
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/ffpa/wgmma/ffpa_wgmma_kernel.cuh"
#include "kernels/ffpa/wgmma/ffpa_wgmma_launch.hpp"
#include "kernels/ffpa/wgmma/ffpa_wgmma_traits.hpp"

namespace attn::ffpa_wgmma {

template <typename T, bool kAccF16, bool kQResident, int kWGs>
void launch_wgmma(const WgmmaParams& p, cudaStream_t stream) {
  const auto kernel = ffpa_wgmma_kernel<T, kAccF16, kQResident, kWGs>;
  // Once per kernel, to the most any head dim it serves needs (prepare() checked the GPU allows it).
  static const cudaError_t attr_status = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem_bytes(kQResident, kWGs));
  ATTN_CUDA_CHECK(attr_status);
  const int m_blocks = (p.seq_q + rows_of(kWGs) - 1) / rows_of(kWGs);
  const dim3 grid(static_cast<unsigned>(m_blocks * p.n_passes), static_cast<unsigned>(p.heads_q),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, threads_of(kWGs), smem_bytes(p.head_dim, kQResident, kWGs), stream>>>(p);
  ATTN_CUDA_CHECK_LAUNCH("ffpa.wgmma ffpa_wgmma_kernel");
}

template <DType kType, bool kAccF16>
void run_wgmma(const WgmmaParams& p, bool q_resident, int wgs, void* stream) {
  using T = std::conditional_t<kType == DType::fp16, __half, __nv_bfloat16>;
  static_assert(kType == DType::fp16 || kType == DType::bf16, "ffpa.wgmma takes fp16 and bf16");
  static_assert(!kAccF16 || kType == DType::fp16, "fp16 accumulation takes fp16 inputs");
  if (!is_supported_head_dim(p.head_dim) || (q_resident && (p.head_dim > kMaxResidentHeadDim || wgs != 2)) ||
      (wgs != 1 && wgs != 2))
    throw KernelError("ffpa.wgmma: head_dim " + std::to_string(p.head_dim) + " with " + std::to_string(wgs) +
                      " warpgroups" + (q_resident ? " and Q resident" : "") + " is not compiled");
  const auto st = static_cast<cudaStream_t>(stream);
  if (wgs == 1)
    launch_wgmma<T, kAccF16, false, 1>(p, st);
  else if (q_resident)
    launch_wgmma<T, kAccF16, true, 2>(p, st);
  else
    launch_wgmma<T, kAccF16, false, 2>(p, st);
}

}  // namespace attn::ffpa_wgmma
