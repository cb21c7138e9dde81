// fa3.wgmma's per-tile consumer operations (sm_90a): the two wgmma shapes of a tile (S = Q K^T from
// shared memory, O += P V with P from registers), the online softmax with conditional rescaling, P's
// packing into wgmma's A-fragment order, the descriptor offsets and the epilogue's quad transpose.
// fa3_kernel.cuh schedules them.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/mma_ptx.cuh"
#include "kernels/common/wgmma_ptx.cuh"
#include "kernels/fa3/fa3_params.hpp"

namespace attn::fa3 {

using ::attn::ptx::exp2_approx;
using ::attn::ptx::kNegInf;
using ::attn::ptx::pack2;
// S (64 x bn) += Q (64 x 16) K^T (16 x bn), both from shared memory.
template <typename T, int BN>
__device__ __forceinline__ void mma_qk(float (&s)[BN / 2], std::uint64_t a, std::uint64_t b, int acc) {
  constexpr bool kHalf = std::is_same_v<T, __half>;
  if constexpr (BN == 64)
    kHalf ? wgmma::ss_m64n64k16_f32_f16(s, a, b, acc) : wgmma::ss_m64n64k16_f32_bf16(s, a, b, acc);
  else if constexpr (BN == 80)
    kHalf ? wgmma::ss_m64n80k16_f32_f16(s, a, b, acc) : wgmma::ss_m64n80k16_f32_bf16(s, a, b, acc);
  else if constexpr (BN == 128)
    kHalf ? wgmma::ss_m64n128k16_f32_f16(s, a, b, acc) : wgmma::ss_m64n128k16_f32_bf16(s, a, b, acc);
  else if constexpr (BN == 176)
    kHalf ? wgmma::ss_m64n176k16_f32_f16(s, a, b, acc) : wgmma::ss_m64n176k16_f32_bf16(s, a, b, acc);
  else
    static_assert(BN == 64, "no wgmma wrapper for this key tile: add it to scripts/gen_wgmma_ptx.py");
}
// The width of one P V instruction: up to 128 columns of O. P is read from registers once per
// instruction and each needs a descriptor, so one n128 beats two n64 (D=128 +2-6%); D=256 issues two
// n128, as one n256 ran 2-6% slower (docs/PERF.md).
constexpr int pv_width(int d) { return d < 128 ? d : 128; }

// O[:, N columns] (64 x N) += P (64 x 16, registers) V (16 x N, transposed from shared memory).
template <typename T, int N>
__device__ __forceinline__ void mma_pv(float (&o)[N / 2], const std::uint32_t (&p)[4], std::uint64_t b) {
  constexpr bool kHalf = std::is_same_v<T, __half>;
  if constexpr (N == 64)
    kHalf ? wgmma::rs_m64n64k16_f32_f16(o, p, b) : wgmma::rs_m64n64k16_f32_bf16(o, p, b);
  else
    kHalf ? wgmma::rs_m64n128k16_f32_f16(o, p, b) : wgmma::rs_m64n128k16_f32_bf16(o, p, b);
}

// A thread's two rows (g and g + 8 of its warp's 16): the running max in log2 units (scale folded
// in) and its share of the row sum (its columns only; the quad's shares are added at the end).
struct RowState {
  float max[2] = {kNegInf, kNegInf};
  float sum[2] = {0.0f, 0.0f};
};

// The reference max moves only when a row's max grows past it by more than this (log2 units), so
// exponentials stay below 2^8 (fp16's and bf16's range holds them) and most tiles after the first few
// leave O unscaled: the O rescale (D / 2 multiplies a thread) and the factor's exp2 are skipped
// whenever no row of the warp moved (FlashAttention-4's conditional rescaling).
inline constexpr float kRescaleSlack = 8.0f;

// The online softmax of one tile's S (wgmma's accumulator layout: register 4 j + e holds row half
// e / 2, column 8 j + 2 t4 + e % 2), in place: masks keys outside the band when `masked`, updates
// the state, leaves the exponentials in `s` and returns the factor O must be rescaled by.
template <int BN, bool Lazy>
__device__ __forceinline__ void online_softmax(float (&s)[BN / 2], const Fa3Params& p, bool masked, int key0,
                                               int diag0, int t4, RowState& st, float (&alpha)[2]) {
  constexpr int kBlocks = BN / 8;
  if (masked) {
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int diag = diag0 + 8 * hr;
      const int first = p.left >= 0 ? max(0, diag - p.left) : 0;
      const int end = p.right >= 0 ? min(p.seq_kv, diag + p.right + 1) : p.seq_kv;
#pragma unroll
      for (int j = 0; j < kBlocks; ++j)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int key = key0 + 8 * j + 2 * t4 + c;
          if (key < first || key >= end) s[4 * j + 2 * hr + c] = kNegInf;
        }
    }
  }
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    float mx = kNegInf;  // on raw scores: the scale is positive
#pragma unroll
    for (int j = 0; j < kBlocks; ++j) mx = fmaxf(mx, fmaxf(s[4 * j + 2 * hr], s[4 * j + 2 * hr + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(st.max[hr], mx * p.scale_log2);
    // The first visible key always moves it (-inf + slack is -inf); no visible key yet: it stays -inf.
    const bool move = !Lazy || m_new > st.max[hr] + kRescaleSlack;
    const float m_ref = move ? m_new : st.max[hr];
    const float ref = m_ref == kNegInf ? 0.0f : m_ref;  // no visible key yet: every exp2 is 0
    alpha[hr] = move ? exp2_approx(st.max[hr] - ref) : 1.0f;
    st.max[hr] = m_ref;
    float tile_sum = 0.0f;
#pragma unroll
    for (int j = 0; j < kBlocks; ++j)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        float& x = s[4 * j + 2 * hr + c];
        x = exp2_approx(fmaf(x, p.scale_log2, -ref));
        tile_sum += x;
      }
    st.sum[hr] = st.sum[hr] * alpha[hr] + tile_sum;
  }
}

// Whether either of the thread's rows has a factor other than 1: the warp skips O's rescale when none
// of its threads' rows moved.
__device__ __forceinline__ bool any_rescale(const float (&alpha)[2]) {
  return alpha[0] != 1.0f || alpha[1] != 1.0f;
}

// P = the softmax's exponentials as 16-bit pairs in wgmma's A-fragment order (k16 slice kk: (g, keys
// 16 kk + 2 t4), (g + 8, same), (g, + 8), (g + 8, + 8)).
template <typename T, int BN>
__device__ __forceinline__ void pack_p(const float (&x)[BN / 2], std::uint32_t (&pa)[BN / 16][4]) {
#pragma unroll
  for (int kk = 0; kk < BN / 16; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int hr = r % 2, j = 2 * kk + r / 2;
      pa[kk][r] = pack2<T>(x[4 * j + 2 * hr], x[4 * j + 2 * hr + 1]);
    }
}

// desc + off, computed where the wgmma issues: written as plain adds, all of an issue's descriptors
// are hoisted into registers ahead of it (64-bit each, dozens per issue), which spills the consumers.
__device__ __forceinline__ std::uint64_t desc_at(std::uint64_t desc, std::uint64_t off) {
  std::uint64_t r;
  asm volatile("add.s64 %0, %1, %2;\n" : "=l"(r) : "l"(desc), "l"(off));
  return r;
}

// A quad's 4 x 4 words transposed: lane t4's word k goes to lane k's word t4. In an accumulator row
// a lane holds one column pair of each 8-column block; after this it holds one block's four pairs,
// 16 contiguous bytes. Two butterfly steps (lanes t4 ^ 2, then t4 ^ 1), each swapping the two words
// whose position differs from the lane in that bit.
__device__ __forceinline__ void quad_transpose(std::uint32_t (&v)[4], int t4) {
#pragma unroll
  for (int m = 2; m >= 1; m /= 2) {
    const bool hi = (t4 & m) != 0;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int lo_pos = m == 2 ? r : 2 * r;  // the position this round swaps when the lane's bit is set
      const int hi_pos = lo_pos | m;          // and when it is clear
      const std::uint32_t got = __shfl_xor_sync(0xffffffffu, hi ? v[lo_pos] : v[hi_pos], m);
      if (hi)
        v[lo_pos] = got;
      else
        v[hi_pos] = got;
    }
  }
}

template <int N>
__device__ __forceinline__ void scale_rows(float (&o)[N], const float (&f)[2]) {
#pragma unroll
  for (int i = 0; i < N; ++i) o[i] *= f[(i / 2) % 2];
}

}  // namespace attn::fa3
