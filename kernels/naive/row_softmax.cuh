// Masked row softmax over an fp32 score matrix [B*Hq*Sq, Sk], one block per row, fp32 math: the
// softmax step of naive.unfused (in place, P in fp32) and cublas.unfused (P in the input dtype).
// Writes P = 0 outside the row's band, LSE [B, Hq, Sq] = max + log(sum), and for a row with no
// visible key P = 0 and LSE = -inf (never NaN).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/reference/device_mask.hpp"
#include "kernels/reference/device_types.cuh"

namespace attn {

constexpr int kSoftmaxThreads = 256;

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
  const std::int64_t row = blockIdx.x;  // (b * Hq + h) * Sq + i, also the LSE index
  // 32-bit modulo: 64-bit division is a called subroutine; grid.x keeps both under 2^31.
  const std::int64_t i = blockIdx.x % static_cast<unsigned>(prm.seq_q);
  const std::int64_t first = prm.mask.first(i);
  const std::int64_t last = prm.mask.last(i);
  const bool any = last > first;
  const float* s_row = s + row * prm.seq_kv;
  TOut* p_row = p + row * prm.seq_kv;
  const float neg_inf = -__int_as_float(0x7f800000);

  float mx = neg_inf;
  for (std::int64_t j = first + threadIdx.x; j < last; j += kSoftmaxThreads)
    mx = fmaxf(mx, s_row[j] * prm.scale);
  mx = block_reduce(mx, scratch, MaxOp{});

  float sum = 0.0f;
  for (std::int64_t j = first + threadIdx.x; j < last; j += kSoftmaxThreads)
    sum += expf(s_row[j] * prm.scale - mx);
  sum = block_reduce(sum, scratch, SumOp{});

  const float inv_sum = any ? 1.0f / sum : 0.0f;
  for (std::int64_t j = threadIdx.x; j < prm.seq_kv; j += kSoftmaxThreads) {
    const float pj = (j >= first && j < last) ? expf(s_row[j] * prm.scale - mx) * inv_sum : 0.0f;
    p_row[j] = from_float<TOut>(pj);
  }
  if (threadIdx.x == 0 && lse != nullptr) lse[row] = any ? mx + logf(sum) : neg_inf;
}

}  // namespace attn
