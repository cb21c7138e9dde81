// fa3.wgmma launch template: the grid (row blocks, heads, batch), the shared-memory opt-in and the
// compiled tile of the head dim. Included only by the instantiation files in inst/.
#pragma once
#include <cuda_runtime.h>

#include <type_traits>

#include "kernels/common/cuda_check.hpp"
#include "kernels/fa3/fa3_kernel.cuh"
#include "kernels/fa3/fa3_launch.hpp"
#include "kernels/fa3/fa3_traits.hpp"

namespace attn::fa3 {

template <DType kType, int kD>
void run_fa3(const Fa3Params& p, void* stream) {
  using T = std::conditional_t<kType == DType::fp16, __half, __nv_bfloat16>;
  static_assert(kType == DType::fp16 || kType == DType::bf16, "fa3.wgmma takes fp16 and bf16");
  static_assert(is_supported_head_dim(kD), "fa3.wgmma is compiled for D = 64, 128, 256");
  constexpr Tile kTile = default_tile(kD);
  constexpr int kSmem = smem_bytes(kD, kTile);
  const auto kernel = fa3_forward_kernel<T, kD, kTile.bn, kTile.stages>;
  // Once per kernel (prepare() checked the GPU allows it).
  static const cudaError_t attr_status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  ATTN_CUDA_CHECK(attr_status);
  const dim3 grid(static_cast<unsigned>((p.seq_q + kBlockM - 1) / kBlockM), static_cast<unsigned>(p.heads_q),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, kThreads, kSmem, static_cast<cudaStream_t>(stream)>>>(p);
  ATTN_CUDA_CHECK_LAUNCH("fa3.wgmma fa3_forward_kernel");
}

}  // namespace attn::fa3
