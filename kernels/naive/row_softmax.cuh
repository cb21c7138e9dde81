// Masked row softmax over an fp32 score matrix [B*Hq*Sq, Sk], one block per row, fp32 math: the
// softmax step of naive.unfused (in place, P in fp32) and cublas.unfused (P in the input dtype).
// Writes P = 0 outside the row's band, LSE [B, Hq, Sq] = max + log(sum), and for a row with no
// visible key P = 0 and LSE = -inf (never NaN).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/api/selected_blocks.hpp"
#include "kernels/reference/device_mask.hpp"
#include "kernels/reference/device_types.cuh"

namespace attn {

constexpr int kSoftmaxThreads = 256;
// The selected branch's key blocks a row may span (a bitmap of 32768 bits in shared memory); the
// unfused kernels' why_not refuse longer rows (row_softmax_select_why_not).
constexpr std::int64_t kSoftmaxMaxKeyBlocks = 32768;

// Why the row softmax cannot take `p`'s selected branch (empty when it can, or has none), for
// kernel `id`'s why_not.
inline std::string row_softmax_select_why_not(const Problem& p, const std::string& id) {
  if (!p.select.active()) return {};
  const std::int64_t blocks = (p.seq_kv + p.select.block - 1) / p.select.block;
  if (blocks > kSoftmaxMaxKeyBlocks)
    return "select = (" + std::to_string(p.select.block) + "," + std::to_string(p.select.count) +
           ") at seq_kv = " + std::to_string(p.seq_kv) + ": " + std::to_string(blocks) + " key blocks; " +
           id + "'s softmax keeps at most " + std::to_string(kSoftmaxMaxKeyBlocks) + " a row (a larger l')";
  return selected_table_why_not(p, id, std::int64_t{1} << 30);
}

struct RowSoftmaxParams {
  DeviceMask mask;
  std::int64_t seq_q = 1;
  std::int64_t seq_kv = 1;
  float scale = 1.0f;  // applied to S before the softmax (1 when S is already scaled)
};

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Every thread gets the reduction of `v` over the block. `scratch` holds one float per warp.
template <typename Op>
__device__ float block_reduce(float v, float* scratch, Op op) {
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  __syncthreads();  // an earlier reduction may still be reading scratch
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) r = op(r, scratch[w]);
  return r;
}

// `s` and `p` may alias (in-place fp32 softmax): each thread reads S[j] before writing P[j] for the
// same j, and every read of the first two passes ends at a block barrier before the third.
template <typename TOut>
__global__ void __launch_bounds__(kSoftmaxThreads)
    masked_softmax_rows(const float* s, TOut* p, float* lse, RowSoftmaxParams prm) {
  __shared__ float scratch[kSoftmaxThreads / 32];
  // The selected branch: this row's query block's key blocks as a bitmap, one test per key.
  __shared__ std::uint32_t selected[kSoftmaxMaxKeyBlocks / 32];
  const std::int64_t row = blockIdx.x;  // (b * Hq + h) * Sq + i, also the LSE index
  // 32-bit modulo: 64-bit division is a called subroutine; grid.x keeps both under 2^31.
  const std::int64_t i = blockIdx.x % static_cast<unsigned>(prm.seq_q);
  const std::int64_t first = prm.mask.first(i);
  const std::int64_t last = prm.mask.last(i);
  const bool any = last > first;
  const float* s_row = s + row * prm.seq_kv;
  TOut* p_row = p + row * prm.seq_kv;
  const float neg_inf = -__int_as_float(0x7f800000);
  // Plain copies: a reference into the parameter struct makes a local copy of it (a spill).
  const std::int32_t* const sel = prm.mask.sel;
  // 32-bit: 64-bit division is a called subroutine (it spilled); Sk < 2^31 (why_not).
  const auto sel_block = static_cast<unsigned>(prm.mask.sel_block);
  const bool select = sel != nullptr;
  if (select) {
    const std::int64_t heads_q = prm.mask.heads_q, heads_kv = prm.mask.heads_kv;
    const unsigned bh = blockIdx.x / static_cast<unsigned>(prm.seq_q);
    const auto b = static_cast<std::int64_t>(bh / static_cast<unsigned>(heads_q));
    const auto g = static_cast<std::int64_t>(bh % static_cast<unsigned>(heads_q)) / (heads_q / heads_kv);
    // The bitmap words of the causal range's blocks.
    const unsigned words = any ? static_cast<unsigned>(last - 1) / sel_block / 32 + 1 : 0u;
    for (unsigned w = threadIdx.x; w < words; w += kSoftmaxThreads) selected[w] = 0u;
    __syncthreads();
    const std::int64_t count = prm.mask.sel_count;
    const std::int32_t* entries =
        sel + ((b * heads_kv + g) * prm.mask.sel_qblocks + static_cast<unsigned>(i) / sel_block) * count;
    for (std::int64_t e = threadIdx.x; e < count; e += kSoftmaxThreads)
      if (const std::int32_t kb = entries[e]; kb >= 0) atomicOr(&selected[kb / 32], 1u << (kb % 32));
    __syncthreads();
  }
  // Visible: inside the band and, for the selected branch, in a selected block.
  const auto seen = [select, sel_block](std::int64_t j) {
    if (!select) return true;
    const unsigned kb = static_cast<unsigned>(j) / sel_block;
    return ((selected[kb / 32] >> (kb % 32)) & 1u) != 0u;
  };

  float mx = neg_inf;
  for (std::int64_t j = first + threadIdx.x; j < last; j += kSoftmaxThreads)
    if (seen(j)) mx = fmaxf(mx, s_row[j] * prm.scale);
  mx = block_reduce(mx, scratch, MaxOp{});

  float sum = 0.0f;
  for (std::int64_t j = first + threadIdx.x; j < last; j += kSoftmaxThreads)
    if (seen(j)) sum += expf(s_row[j] * prm.scale - mx);
  sum = block_reduce(sum, scratch, SumOp{});

  const float inv_sum = any ? 1.0f / sum : 0.0f;
  for (std::int64_t j = threadIdx.x; j < prm.seq_kv; j += kSoftmaxThreads) {
    const float pj = (j >= first && j < last && seen(j)) ? expf(s_row[j] * prm.scale - mx) * inv_sum : 0.0f;
    p_row[j] = from_float<TOut>(pj);
  }
  if (threadIdx.x == 0 && lse != nullptr) lse[row] = any ? mx + logf(sum) : neg_inf;
}

}  // namespace attn
