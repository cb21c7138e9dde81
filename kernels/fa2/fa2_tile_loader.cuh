// fa2.mma tile loads: cp.async copies of Q, K and V row tiles from BSHD global memory into padded
// shared-memory rows, shared by the row-split and the column-split kernels.
#pragma once
#include <cstdint>

#include "kernels/common/mma_ptx.cuh"

namespace attn::fa2 {

// Tile loads: a row of D elements is kChunks 16-byte chunks, copied by kLanesPerRow threads (the
// next power of two; the extra lanes of D = 96/160/224 idle). A thread always copies the same chunk
// of rows my_row + pass * kRowsPerPass, so its source is one pointer plus a per-pass stride, and
// its smem destination a constant offset per pass: few live registers across the main loop.
template <typename Tr>
struct TileLoader {
  static constexpr int kLanesPerRow = Tr::kChunks <= 4    ? 4
                                      : Tr::kChunks <= 8  ? 8
                                      : Tr::kChunks <= 16 ? 16
                                                          : 32;
  static constexpr int kRowsPerPass = Tr::kThreads / kLanesPerRow;
  int my_row;
  int my_chunk;
  bool active;
  std::uint32_t smem_off;  // [bytes] within a tile

  __device__ __forceinline__ explicit TileLoader(int tid)
      : my_row(tid / kLanesPerRow),
        my_chunk(tid % kLanesPerRow),
        active(tid % kLanesPerRow < Tr::kChunks),
        smem_off(
            static_cast<std::uint32_t>(((tid / kLanesPerRow) * Tr::kStride + (tid % kLanesPerRow) * 8) * 2)) {
  }

  // Rows [row0, row0 + Rows) of a BSHD tensor (row stride ld [elements]); rows >= limit are
  // zero-filled so that padding keys give finite scores and 0 * V stays 0.
  template <int Rows, typename T>
  __device__ __forceinline__ void load(std::uint32_t s_tile, const T* g_base, int row0, int limit,
                                       std::int64_t ld) const {
    static_assert(Rows % kRowsPerPass == 0, "tile rows split evenly over passes");
    if (!active) return;
    const int rows_left =
        limit - row0 - my_row;  // this thread's rows with pass * kRowsPerPass < rows_left exist
    const T* src = g_base + static_cast<std::int64_t>(row0 + my_row) * ld + my_chunk * 8;
    const std::int64_t pass_stride = ld * kRowsPerPass;
#pragma unroll
    for (int pass = 0; pass < Rows / kRowsPerPass; ++pass) {
      const bool ok = pass * kRowsPerPass < rows_left;
      ::attn::ptx::cp_async_16(
          s_tile + smem_off + static_cast<std::uint32_t>(pass * kRowsPerPass * Tr::kStride * 2),
          ok ? static_cast<const void*>(src) : static_cast<const void*>(g_base), ok ? 16 : 0);
      // One running pointer: without this barrier the compiler keeps a pointer per pass live
      // across the main loop (16 registers a tensor for D=128) and spills.
      src += pass_stride;
      asm volatile("" : "+l"(src));
    }
  }
};

}  // namespace attn::fa2
