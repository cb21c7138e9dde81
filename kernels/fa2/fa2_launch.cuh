// fa2.mma launch template: the one place where the runtime tile choice, mask flag and varlen layout
// become template constants. Included only by the instantiation files in inst/.
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "kernels/common/cuda_check.hpp"
#include "kernels/fa2/fa2_kernel.cuh"
#include "kernels/fa2/fa2_launch.hpp"

namespace attn::fa2 {

template <typename T, int D, int Br, int Bc, int Warps, int Stages, bool kBand, bool kVarlen = false,
          bool kSelect = false>
void launch_fa2(const Fa2Params& p, cudaStream_t stream) {
  using Tr = KernelTraits<D, Br, Bc, Warps, Stages>;
  const auto kernel = fa2_fwd_kernel<T, Tr, kBand, kVarlen, kSelect>;
  // Over 48 KiB of dynamic shared memory needs an opt-in, once per kernel; the selected branch's
  // kernel opts in to room for its longest visit list, and each launch asks for its own.
  constexpr int kMaxSmem = Tr::kSmemBytes + (kSelect ? select_list_bytes(kMaxSelectTiles) : 0);
  static const cudaError_t attr_status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxSmem);
  ATTN_CUDA_CHECK(attr_status);
  const int smem = Tr::kSmemBytes + (kSelect ? select_list_bytes(p.sel_count * (p.sel_block / Bc)) : 0);
  const dim3 grid(static_cast<unsigned>((p.seq_q + Br - 1) / Br), static_cast<unsigned>(p.heads_q),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, Tr::kThreads, smem, stream>>>(p);
  ATTN_CUDA_CHECK_LAUNCH("fa2.mma fa2_fwd_kernel");
}

template <DType kType>
using DeviceType = std::conditional_t<kType == DType::fp16, __half, __nv_bfloat16>;

template <DType kType, int D>
void run_fa2(const Fa2Params& p, const TileConfig& tiles, bool band, void* stream) {
  using T = DeviceType<kType>;
  static_assert(kType == DType::fp16 || kType == DType::bf16, "fa2.mma takes fp16 and bf16");
  constexpr auto kTiles = compiled_tiles(D);
  auto st = static_cast<cudaStream_t>(stream);
  if (p.sel != nullptr) {  // the selected branch has its own tile, outside the knob-selectable list
    constexpr TileConfig sc = select_tiles(D);
    if (!(tiles == sc))
      throw KernelError("fa2.mma: the selected branch runs tiles " + to_string(sc) +
                        " at D=" + std::to_string(D) + ", not " + to_string(tiles));
    launch_fa2<T, D, sc.br, sc.bc, sc.warps, sc.stages, true, false, true>(p, st);
    return;
  }
  bool launched = false;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          constexpr TileConfig c = kTiles[I];
          if (launched || !(tiles == c)) return;
          launched = true;
          if (p.cu_q != nullptr) {
            // One tile per head dim carries the varlen kernel (compile time: 16 kernels, not 56).
            if constexpr (c == varlen_tiles(D))
              launch_fa2<T, D, c.br, c.bc, c.warps, c.stages, true, true>(p, st);
            else
              throw KernelError("fa2.mma: tiles " + to_string(c) + " are compiled without varlen; D=" +
                                std::to_string(D) + " takes it with " + to_string(varlen_tiles(D)));
          } else if (band) {
            if constexpr (is_tight(D, c))
              throw KernelError("fa2.mma: tiles " + to_string(c) + " are compiled without the band mask");
            else
              launch_fa2<T, D, c.br, c.bc, c.warps, c.stages, true>(p, st);
          } else
            launch_fa2<T, D, c.br, c.bc, c.warps, c.stages, false>(p, st);
        }(),
        ...);
  }
  (std::make_index_sequence<kTiles.size()>{});
  if (!launched)
    throw KernelError("fa2.mma: tiles " + to_string(tiles) + " are not compiled for D=" + std::to_string(D));
}

}  // namespace attn::fa2
