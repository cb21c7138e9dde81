// fa3.wgmma launch template: the persistent grid (one CTA an SM, at most one a work item: the kernel
// walks the ordered work list), the shared-memory opt-in and the switch over the head dim's compiled
// tiles.
// Included only by the instantiation files in inst/.
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/fa3/fa3_kernel.cuh"
#include "kernels/fa3/fa3_launch.hpp"
#include "kernels/fa3/fa3_traits.hpp"

namespace attn::fa3 {

template <typename T, int D, int BN, int Stages, int WGs>
void launch_fa3(const Fa3Params& p, cudaStream_t stream) {
  constexpr Tile kTile{BN, Stages, WGs};
  constexpr int kSmem = smem_bytes(D, kTile);
  const auto kernel = fa3_forward_kernel<T, D, BN, Stages, WGs>;
  // Once per kernel (prepare() checked the GPU allows it).
  static const cudaError_t attr_status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  ATTN_CUDA_CHECK(attr_status);
  const int m_blocks = (p.seq_q + rows_of(kTile) - 1) / rows_of(kTile);
  const int work = m_blocks * p.heads_q * p.batch;  // why_not keeps it inside int
  const int ctas = p.max_ctas > 0 && p.max_ctas < work ? p.max_ctas : work;
  kernel<<<static_cast<unsigned>(ctas), threads_of(kTile), kSmem, stream>>>(p);
  ATTN_CUDA_CHECK_LAUNCH("fa3.wgmma fa3_forward_kernel");
}

template <DType kType, int kD>
void run_fa3(const Fa3Params& p, const Tile& tile, void* stream) {
  using T = std::conditional_t<kType == DType::fp16, __half, __nv_bfloat16>;
  static_assert(kType == DType::fp16 || kType == DType::bf16, "fa3.wgmma takes fp16 and bf16");
  const auto st = static_cast<cudaStream_t>(stream);
  if constexpr (kD == 64) {
    if (tile == kTiles64[0])
      return launch_fa3<T, 64, kTiles64[0].bn, kTiles64[0].stages, kTiles64[0].wgs>(p, st);
    if (tile == kTiles64[1])
      return launch_fa3<T, 64, kTiles64[1].bn, kTiles64[1].stages, kTiles64[1].wgs>(p, st);
  } else if constexpr (kD == 128) {
    if (tile == kTiles128[0])
      return launch_fa3<T, 128, kTiles128[0].bn, kTiles128[0].stages, kTiles128[0].wgs>(p, st);
    if (tile == kTiles128[1])
      return launch_fa3<T, 128, kTiles128[1].bn, kTiles128[1].stages, kTiles128[1].wgs>(p, st);
  } else {
    static_assert(kD == 256, "fa3.wgmma is compiled for D = 64, 128, 256");
    if (tile == kTiles256[0])
      return launch_fa3<T, 256, kTiles256[0].bn, kTiles256[0].stages, kTiles256[0].wgs>(p, st);
    if (tile == kTiles256[1])
      return launch_fa3<T, 256, kTiles256[1].bn, kTiles256[1].stages, kTiles256[1].wgs>(p, st);
  }
  std::string why = "fa3.wgmma: bn ";
  why += std::to_string(tile.bn);
  why += ", warpgroups ";
  why += std::to_string(tile.wgs);
  why += " is not compiled for D=";
  why += std::to_string(kD);
  throw KernelError(why);
}

}  // namespace attn::fa3
