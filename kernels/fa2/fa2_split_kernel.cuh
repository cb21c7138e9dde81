// fa2.mma kernel body, column-split layout (tiles with cols = 2): a pair of warps owns 32 query rows.
// In S = QK^T each warp of the pair takes half of the tile's keys; in O += PV each takes half of O's
// columns over all the tile's keys, reading the pair's P from shared memory. A warp thus holds 32 rows
// of O at D = 256 in 128 registers, where the row-split layout can hold only 16, and every K and V
// fragment read from shared memory feeds two m16 tiles instead of one: ldmatrix traffic a mma drops
// from 0.56 to 0.41 (Bc = 64), which is what bounds the row-split D = 256 kernel.
// The pair's row maxima meet in shared memory at the CTA barrier that already waits for V; P meets at
// a named barrier of the pair. The row sums stay per warp (both use the same maxima) and are added
// in the epilogue.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/common/mma_ptx.cuh"
#include "kernels/fa2/fa2_params.hpp"
#include "kernels/fa2/fa2_tile_loader.cuh"

namespace attn::fa2 {

using namespace ::attn::ptx;  // NOLINT(google-build-using-namespace): the PTX wrappers

template <int D, int Br, int Bc, int Warps, int Stages>
struct SplitTraits {
  static constexpr int kKBufs = Stages;
  static constexpr int kD = D;
  static constexpr int kBr = Br;
  static constexpr int kBc = Bc;
  static constexpr int kWarps = Warps;
  static constexpr int kThreads = Warps * 32;
  static constexpr int kStride = D + 8;  // smem row of Q/K/V [elements]: an odd count of 16-byte chunks
  static constexpr int kChunks = D / 8;
  static constexpr int kPStride = Bc + 8;  // smem row of P [elements]
  static constexpr int kWarpRows = 32;
  static constexpr int kPairs = Warps / 2;
  static constexpr int kWarpKeys = Bc / 2;  // keys of S a warp computes
  static constexpr int kWarpCols = D / 2;   // columns of O a warp owns
  static constexpr int kSmemQ = Br * kStride;
  static constexpr int kSmemKV = Bc * kStride;
  static constexpr int kSmemP = Br * kPStride;
  // Q, Stages K buffers, one V buffer, P [elements of T], then 2 x Br fp32 (a row's max or sum per
  // column half).
  static constexpr int kSmemBytes = (kSmemQ + (Stages + 1) * kSmemKV + kSmemP) * 2 + Br * 2 * 4;
  static_assert(Warps % 2 == 0 && Br == kPairs * kWarpRows, "pairs of warps own 32 rows each");
  static_assert(kWarpKeys % 16 == 0 && kWarpCols % 16 == 0, "each warp's keys and columns: multiples of 16");
  static_assert(Stages == 1 || Stages == 2, "one or two K buffers");
  static_assert(D <= 256, "D at most 256");
};

// Barrier of pair `pair` (ids 1..Pairs): immediate ids, so ptxas reserves Pairs + 1 hardware barriers
// a CTA instead of all 16 (a register id reserves every one, which can cap CTAs an SM).
template <int Pairs>
__device__ __forceinline__ void pair_barrier(int pair) {
  static_assert(Pairs >= 1 && Pairs <= 4, "up to 4 pairs (8 warps)");
  if (pair == 0) named_barrier_sync<1, 64>();
  if constexpr (Pairs > 1)
    if (pair == 1) named_barrier_sync<2, 64>();
  if constexpr (Pairs > 2)
    if (pair == 2) named_barrier_sync<3, 64>();
  if constexpr (Pairs > 3)
    if (pair == 3) named_barrier_sync<4, 64>();
}

template <typename T, typename Tr, bool kBand>
__global__ void __launch_bounds__(Tr::kThreads, 1) fa2_fwd_split_kernel(const Fa2Params p) {
  constexpr int D = Tr::kD, Bc = Tr::kBc, Br = Tr::kBr;
  constexpr int kMT = 2;                     // m16 tiles of a warp's 32 rows
  constexpr int kNT = Tr::kWarpKeys / 8;     // n8 tiles of a warp's S
  constexpr int kDT = Tr::kWarpCols / 8;     // n8 tiles of a warp's O
  constexpr int kStrideB = Tr::kStride * 2;  // [bytes]
  constexpr int kPStrideB = Tr::kPStride * 2;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* s_q = reinterpret_cast<T*>(smem_raw);
  T* s_k = s_q + Tr::kSmemQ;
  T* s_v = s_k + Tr::kKBufs * Tr::kSmemKV;
  T* s_p = s_v + Tr::kSmemKV;
  float* s_row = reinterpret_cast<float*>(s_p + Tr::kSmemP);  // [column half][Br]
  const std::uint32_t a_q = smem_addr(s_q), a_k = smem_addr(s_k), a_v = smem_addr(s_v), a_p = smem_addr(s_p);

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t4 = lane % 4;
  const int pair = warp / 2, half = warp % 2;  // rows [32 pair, +32); keys and O columns: half
  const int m_block = static_cast<int>(gridDim.x - 1 - blockIdx.x);
  const int h = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int row0 = m_block * Br;

  const T* q_base = static_cast<const T*>(p.q) + (static_cast<std::int64_t>(b) * p.seq_q * p.heads_q + h) * D;
  const auto kv_head = [&p]() {
    return (static_cast<std::int64_t>(ctaid_z()) * p.seq_kv * p.heads_kv + ctaid_y() / p.group) * D;
  };

  const int diag_off = p.seq_kv - p.seq_q;
  const int row_last = min(p.seq_q, row0 + Br) - 1;
  int key_lo = 0, key_hi = p.seq_kv;
  if constexpr (kBand) {
    if (p.left >= 0) key_lo = max(0, row0 + diag_off - p.left);
    if (p.right >= 0) key_hi = min(p.seq_kv, row_last + diag_off + p.right + 1);
  }
  const int n_lo = key_lo / Bc;
  const int n_hi = key_hi > key_lo ? (key_hi + Bc - 1) / Bc : n_lo;
  int full_lo = 0, full_hi = p.seq_kv;
  if constexpr (kBand) {
    if (p.left >= 0) full_lo = max(0, row_last + diag_off - p.left);
    if (p.right >= 0) full_hi = min(p.seq_kv, row0 + diag_off + p.right + 1);
  }

  const TileLoader<Tr> loader(tid);
  loader.template load<Br>(a_q, q_base, row0, p.seq_q, p.q_row_stride);
  if (n_hi > n_lo)
    loader.template load<Bc>(a_k, static_cast<const T*>(p.k) + kv_head(), (n_hi - 1) * Bc, p.seq_kv,
                             p.kv_row_stride);
  cp_async_commit();

  float o[kMT][kDT][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int j = 0; j < kDT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[mt][j][e] = 0.0f;
  float row_max[kMT][2], row_sum[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[mt][r] = kNegInf;
      row_sum[mt][r] = 0.0f;
    }

  const int warp_row0 = pair * Tr::kWarpRows;
  // ldmatrix lane addresses [bytes]: Q and P as A operands (rows lane%16, column half lane/16), K as
  // the B operand of this warp's keys, V through .trans at this warp's columns.
  const std::uint32_t q_lane =
      a_q + static_cast<std::uint32_t>((warp_row0 + (lane & 15)) * kStrideB + (lane >> 4) * 16);
  const std::uint32_t p_lane =
      a_p + static_cast<std::uint32_t>((warp_row0 + (lane & 15)) * kPStrideB + (lane >> 4) * 16);
  const std::uint32_t k_lane =
      a_k + static_cast<std::uint32_t>((half * Tr::kWarpKeys + (lane & 7) + ((lane >> 4) << 3)) * kStrideB +
                                       ((lane >> 3) & 1) * 16);
  const std::uint32_t v_lane =
      a_v + static_cast<std::uint32_t>(((lane & 7) + (((lane >> 3) & 1) << 3)) * kStrideB +
                                       (half * Tr::kWarpCols + (lane >> 4) * 8) * 2);
  // This thread's P pairs: row warp_row0 + g (+ 8 r, + 16 mt), key half * kWarpKeys + 2 t4 (+ 8 j).
  T* p_mine = s_p + (warp_row0 + g) * Tr::kPStride + half * Tr::kWarpKeys + 2 * t4;

  constexpr std::uint32_t kKBufBytes = Tr::kSmemKV * 2;
  std::uint32_t k_buf = 0;
  for (int n = n_hi - 1; n >= n_lo; --n) {
    cp_async_wait_all();
    __syncthreads();  // K_n landed; every warp is past the last tile's PV (s_v, s_p free) and QK
    loader.template load<Bc>(a_v, static_cast<const T*>(p.v) + kv_head(), n * Bc, p.seq_kv, p.kv_row_stride);
    cp_async_commit();
    const bool more = n > n_lo;
    if (Tr::kKBufs == 2 && more) {
      loader.template load<Bc>(a_k + (k_buf ^ kKBufBytes), static_cast<const T*>(p.k) + kv_head(),
                               (n - 1) * Bc, p.seq_kv, p.kv_row_stride);
      cp_async_commit();
    }

    // S = Q K^T over this warp's half of the tile's keys.
    float s[kMT][kNT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int j = 0; j < kNT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][j][e] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      std::uint32_t qa[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) ldmatrix_x4(q_lane + mt * 16 * kStrideB + kk * 32, qa[mt]);
#pragma unroll
      for (int nj = 0; nj < kNT / 2; ++nj) {
        std::uint32_t kb[4];
        ldmatrix_x4(k_lane + k_buf + nj * 16 * kStrideB + kk * 32, kb);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma_16816<T>(s[mt][2 * nj], qa[mt], kb[0], kb[1]);
          mma_16816<T>(s[mt][2 * nj + 1], qa[mt], kb[2], kb[3]);
        }
      }
    }

    const int key0 = n * Bc;
    const bool need_mask = kBand ? (key0 < full_lo || key0 + Bc > full_hi) : (key0 + Bc > p.seq_kv);
    if (need_mask) {
      const int wkey0 = key0 + half * Tr::kWarpKeys;
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          int first = 0, end = p.seq_kv;
          if constexpr (kBand) {
            const int diag = row0 + warp_row0 + mt * 16 + g + 8 * r + diag_off;
            if (p.left >= 0) first = max(0, diag - p.left);
            if (p.right >= 0) end = min(p.seq_kv, diag + p.right + 1);
          }
#pragma unroll
          for (int j = 0; j < kNT; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int key = wkey0 + 8 * j + 2 * t4 + e;
              if (key < first || key >= end) s[mt][j][2 * r + e] = kNegInf;
            }
        }
    }

    // This warp's row maxima over its keys, published for the pair (and read back after the barrier
    // rather than held across it: 4 registers fewer where the band-masked kernels are tightest).
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float mx = kNegInf;
#pragma unroll
        for (int j = 0; j < kNT; ++j) mx = fmaxf(mx, fmaxf(s[mt][j][2 * r], s[mt][j][2 * r + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        if (t4 == 0) s_row[half * Br + warp_row0 + mt * 16 + g + 8 * r] = mx;
      }

    if (Tr::kKBufs == 2 && more)
      cp_async_wait_but_one();
    else
      cp_async_wait_all();
    // V_n landed for every thread's copies, the pair's maxima are visible, and (one K buffer) every
    // warp's QK is done with K_n.
    __syncthreads();
    if (Tr::kKBufs == 1 && more) {
      loader.template load<Bc>(a_k, static_cast<const T*>(p.k) + kv_head(), (n - 1) * Bc, p.seq_kv,
                               p.kv_row_stride);
      cp_async_commit();
    }

    // Online softmax with the pair's maxima; P goes to shared memory in the A-operand layout's rows.
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int lrow = warp_row0 + mt * 16 + g + 8 * r;
        const float mx = fmaxf(row_max[mt][r], fmaxf(s_row[lrow], s_row[Br + lrow]));
        // A row with no visible key so far keeps max -inf: use 0 so exp2 sees -inf, not NaN.
        const float m_scaled = mx == kNegInf ? 0.0f : mx * p.scale_log2;
        const float alpha = exp2_approx(row_max[mt][r] * p.scale_log2 - m_scaled);
        row_max[mt][r] = mx;
        float sum = 0.0f;
        T* p_row = p_mine + (mt * 16 + 8 * r) * Tr::kPStride;
#pragma unroll
        for (int j = 0; j < kNT; ++j) {
          const float p0 = exp2_approx(fmaf(s[mt][j][2 * r], p.scale_log2, -m_scaled));
          const float p1 = exp2_approx(fmaf(s[mt][j][2 * r + 1], p.scale_log2, -m_scaled));
          sum += p0 + p1;
          *reinterpret_cast<std::uint32_t*>(p_row + 8 * j) = pack2<T>(p0, p1);
        }
        row_sum[mt][r] = row_sum[mt][r] * alpha + sum;
#pragma unroll
        for (int j = 0; j < kDT; ++j) {
          o[mt][j][2 * r] *= alpha;
          o[mt][j][2 * r + 1] *= alpha;
        }
      }
    pair_barrier<Tr::kPairs>(pair);  // the pair's P rows are complete

    // O[:, this warp's columns] += P V_n over all the tile's keys.
#pragma unroll
    for (int kk = 0; kk < Bc / 16; ++kk) {
      std::uint32_t pa[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) ldmatrix_x4(p_lane + mt * 16 * kPStrideB + kk * 32, pa[mt]);
#pragma unroll
      for (int dj = 0; dj < kDT / 2; ++dj) {
        std::uint32_t vb[4];
        ldmatrix_x4_trans(v_lane + kk * 16 * kStrideB + dj * 32, vb);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma_16816<T>(o[mt][2 * dj], pa[mt], vb[0], vb[1]);
          mma_16816<T>(o[mt][2 * dj + 1], pa[mt], vb[2], vb[3]);
        }
      }
    }
    if (Tr::kKBufs == 2) k_buf ^= kKBufBytes;
  }

  // Epilogue: add the pair's row sums, normalise this warp's columns, stage O through s_q (16-byte
  // coalesced stores), write LSE (the even warp of the pair).
  cp_async_wait_all();
  float quad_sum[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float sum = row_sum[mt][r];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      quad_sum[mt][r] = sum;
    }
  __syncthreads();  // every warp is past its last read of s_row and s_q
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r)
      if (t4 == 0) s_row[half * Br + warp_row0 + mt * 16 + g + 8 * r] = quad_sum[mt][r];
  __syncthreads();
  const int e_b = ctaid_z(), e_h = ctaid_y();
  const int e_row0 = (static_cast<int>(gridDim.x) - 1 - ctaid_x()) * Br;
  T* o_base = static_cast<T*>(p.o) + (static_cast<std::int64_t>(e_b) * p.seq_q * p.heads_q + e_h) * D;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int lrow = warp_row0 + mt * 16 + g + 8 * r;
      const float sum = quad_sum[mt][r] + s_row[(half ^ 1) * Br + lrow];
      const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;  // no visible key: O = 0
#pragma unroll
      for (int j = 0; j < kDT; ++j) {
        const std::uint32_t pr = pack2<T>(o[mt][j][2 * r] * inv, o[mt][j][2 * r + 1] * inv);
        *reinterpret_cast<std::uint32_t*>(s_q + lrow * Tr::kStride + half * Tr::kWarpCols + 8 * j + 2 * t4) =
            pr;
      }
      const int row = e_row0 + lrow;
      if (p.lse != nullptr && half == 0 && t4 == 0 && row < p.seq_q) {
        const float lse =
            sum > 0.0f ? (row_max[mt][r] * p.scale_log2 + log2f(sum)) * 0.6931471805599453f : kNegInf;
        p.lse[(static_cast<std::int64_t>(e_b) * p.heads_q + e_h) * p.seq_q + row] = lse;
      }
    }
  __syncthreads();
  constexpr int kOChunks = Br * Tr::kChunks;
#pragma unroll
  for (int it = 0; it < (kOChunks + Tr::kThreads - 1) / Tr::kThreads; ++it) {
    const int c = tid + it * Tr::kThreads;
    if (kOChunks % Tr::kThreads == 0 || c < kOChunks) {
      const int r = c / Tr::kChunks, ch = c % Tr::kChunks;
      const int row = e_row0 + r;
      if (row < p.seq_q)
        *reinterpret_cast<uint4*>(o_base + static_cast<std::int64_t>(row) * p.q_row_stride + ch * 8) =
            *reinterpret_cast<const uint4*>(s_q + r * Tr::kStride + ch * 8);
    }
  }
}

}  // namespace attn::fa2
