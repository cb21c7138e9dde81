// fa3.wgmma launch template: the persistent grid (one CTA an SM, at most one a work item: the kernel
// walks the ordered work list), the shared-memory opt-in and the switch over the head dim's compiled
// tiles.
// Included only by the instantiation files in inst/.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/common/cluster_launch.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/fa3/fa3_kernel.cuh"
#include "kernels/fa3/fa3_launch.hpp"
#include "kernels/fa3/fa3_traits.hpp"

namespace attn::fa3 {

template <typename T, int D, int BN, int Stages, int WGs, int Cluster, int QBufs, bool TmaStore>
void launch_fa3(const Fa3Params& p, cudaStream_t stream) {
  constexpr Tile kTile{BN, Stages, WGs, Cluster, QBufs, TmaStore};
  constexpr int kSmem = smem_bytes(D, kTile);
  static_assert(kSmem <= 227 * 1024, "the tile's shared memory exceeds sm_90's 227 KiB a CTA");
  const auto kernel = fa3_forward_kernel<T, D, BN, Stages, WGs, Cluster, QBufs, TmaStore>;
  // Once per kernel (prepare() checked the GPU allows the shared memory): the attribute, and how many
  // clusters fit at once. A GPC with an odd number of free SMs leaves one idle, so a persistent grid
  // of clusters is sized by the occupancy query, not the SM count: a cluster that had to wait for a
  // second wave would run its whole static share of the list after the others finished.
  static const int resident_clusters = [&] {
    ATTN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    if constexpr (Cluster == 1) return 0;
    int n = 0;
    const ClusterLaunch one(dim3(Cluster), dim3(threads_of(kTile)), kSmem, stream, Cluster);
    ATTN_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, kernel, &one.config));
    if (n < 1)
      throw KernelError("fa3.wgmma: no cluster of " + std::to_string(Cluster) + " CTAs fits this GPU");
    return n;
  }();
  const int m_blocks = (p.seq_q + rows_of(kTile) - 1) / rows_of(kTile);
  const int work = (m_blocks + Cluster - 1) / Cluster * p.heads_q * p.batch;  // why_not keeps it inside int
  int clusters = work;
  if (p.max_ctas > 0) clusters = std::min(work, Cluster == 1 ? p.max_ctas : resident_clusters);
  const ClusterLaunch launch(dim3(static_cast<unsigned>(clusters * Cluster)), dim3(threads_of(kTile)), kSmem,
                             stream, Cluster);
  ATTN_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel, p));
  ATTN_CUDA_CHECK_LAUNCH("fa3.wgmma fa3_forward_kernel");
}

// The compiled tiles of a head dim, tried in order against the requested one.
template <typename T, int D, const auto& kTiles, std::size_t... I>
bool launch_compiled(const Fa3Params& p, const Tile& tile, cudaStream_t stream, std::index_sequence<I...>) {
  return ((tile == kTiles[I] &&
           (launch_fa3<T, D, kTiles[I].bn, kTiles[I].stages, kTiles[I].wgs, kTiles[I].cluster,
                       kTiles[I].q_buffers, kTiles[I].tma_store>(p, stream),
            true)) ||
          ...);
}

template <DType kType, int kD>
void run_fa3(const Fa3Params& p, const Tile& tile, void* stream) {
  using T = std::conditional_t<kType == DType::fp16, __half, __nv_bfloat16>;
  static_assert(kType == DType::fp16 || kType == DType::bf16, "fa3.wgmma takes fp16 and bf16");
  static_assert(kD == 64 || kD == 128 || kD == 256, "fa3.wgmma is compiled for D = 64, 128, 256");
  const auto st = static_cast<cudaStream_t>(stream);
  constexpr const auto& kTiles = tiles_of<kD>();
  if (launch_compiled<T, kD, kTiles>(p, tile, st, std::make_index_sequence<std::size(kTiles)>{})) return;
  std::string why = "fa3.wgmma: bn ";
  why += std::to_string(tile.bn);
  why += ", warpgroups ";
  why += std::to_string(tile.wgs);
  why += ", cluster ";
  why += std::to_string(tile.cluster);
  why += ", q_buffers ";
  why += std::to_string(tile.q_buffers);
  if (tile.tma_store) why += ", TMA-store epilogue";
  why += " is not compiled for D=";
  why += std::to_string(kD);
  throw KernelError(why);
}

}  // namespace attn::fa3
