// ffpa.l1 kernel body: attention for large head dims with shared memory constant in D. Q, K and V
// are streamed through a ring of (stages + 1) buffers in chunks of 64 or 128 columns of D ("items": for each
// K/V tile, one Q+K chunk per chunk of columns, then one V chunk per chunk), so a CTA's shared
// memory is (stages + 1) x (Br + Bc) x chunk elements whatever D is. S = QK^T accumulates over the Q+K
// items; P V accumulates into O, which stays in registers for the whole row block.
//
// Warps: Br / R row groups x (warps / (Br / R)) key/column groups, R = 16 or 32 rows a warp. In QK,
// warp (m, n) computes the R x (Bc / groups) scores of its rows and key slice; in PV it owns R rows x
// (chunk / groups) columns of every chunk of O. With more than one group a row's softmax statistics are
// combined through shared memory and P goes through shared memory; with one group (Br = 128) P stays in
// registers as in fa2.mma.
//
// Accumulation: acc_f32 keeps S and O in fp32 (O unnormalised, divided by the row sum at the end).
// acc_f16 runs both MMAs with fp16 accumulators: S in fp16, and each tile's P V in a fresh fp16
// accumulator over its Bc keys, folded into an fp16 O kept normalised (O = U / l), so O never holds
// the unnormalised sum (which overflows fp16 once l * |v| > 65504) and P is never divided into
// fp16 subnormals. The softmax state (max, sum) is fp32 in both.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/mma_ptx.cuh"
#include "kernels/fa2/fa2_head_offsets.cuh"
#include "kernels/ffpa/ffpa_key_tiles.cuh"
#include "kernels/ffpa/ffpa_params.hpp"
#include "kernels/ffpa/ffpa_traits.hpp"

namespace attn::ffpa {

using namespace ::attn::ptx;  // NOLINT(google-build-using-namespace): the PTX wrappers

template <int Br, int Bc, int DMax, int Warps, int WarpRows, int Chunk, int Stages, bool AccF16,
          bool QResident>
struct KernelTraits {
  static constexpr int kBr = Br;
  static constexpr int kBc = Bc;
  static constexpr int kWarps = Warps;
  static constexpr int kChunk = Chunk;  // D columns per streamed item
  static constexpr int kStages = Stages;
  static constexpr bool kAccF16 = AccF16;
  // Q resident: the CTA's Q (Br x D) is loaded once into shared memory after the buffers, and the
  // items carry only K or V, a third less L2 traffic at Br = Bc; shared memory then grows with D.
  static constexpr bool kQResident = QResident;
  static constexpr int kThreads = Warps * 32;
  // Two CTAs an SM where a CTA is 4 warps (the register file holds both): one CTA's barriers and
  // loads overlap the other's MMAs.
  static constexpr int kMinBlocks = Warps == 4 ? 2 : 1;
  // A warp holds WarpRows (16 or 32) query rows: with 32 every K and V fragment read from shared
  // memory feeds two m16 tiles (half the ldmatrix traffic per MMA), and O's columns are split over
  // more warps to keep O's registers per thread the same.
  static constexpr int kMT = WarpRows / 16;
  static constexpr int kWM = Br / WarpRows;       // row groups
  static constexpr int kWN = Warps / kWM;         // key (QK) / column (PV) groups
  static constexpr int kKeysW = Bc / kWN;         // keys of S a warp computes
  static constexpr int kColsW = Chunk / kWN;      // columns of each O chunk a warp owns
  static constexpr int kLanesPerRow = Chunk / 8;  // 16-byte copies a row of a chunk
  static constexpr int kRowsPerPass = kThreads / kLanesPerRow;
  static constexpr int kStride = smem_stride(Chunk);
  static constexpr int kStrideB = kStride * 2;
  static constexpr int kBufs = Stages + 1;
  static constexpr int kBufRows = QResident ? Bc : Br + Bc;  // Q chunk rows [0, Br) then K, or K/V only
  static constexpr int kBufBytes = kBufRows * kStrideB;
  static constexpr int kPStride = Bc + 8;  // P rows [elements]
  static constexpr int kMaxChunks = DMax / Chunk;
  static constexpr int kPOffset = kBufs * kBufBytes;  // [bytes]
  static constexpr int kStatsOffset = kPOffset + (kWN > 1 ? Br * kPStride * 2 : 0);
  static constexpr int kQOffset =
      smem_bytes({Br, Bc, DMax, Warps, Chunk, WarpRows}, Stages, QResident, 0);  // [bytes]
  static constexpr int kSmemBytes =
      smem_bytes({Br, Bc, DMax, Warps, Chunk, WarpRows}, Stages, QResident, DMax);
  static_assert(kWM * kWN == Warps, "row groups x key groups = warps");
  static_assert(kKeysW % 16 == 0 && kColsW % 16 == 0, "warp slices are multiples of 16");
  static_assert(Br % kRowsPerPass == 0 && Bc % kRowsPerPass == 0, "tiles split evenly over loader passes");
  static_assert(DMax % Chunk == 0, "capacity is whole chunks");
  static_assert(Stages >= 1 && Stages <= kMaxStages, "stages 1 or 2");
};

// Copies a chunk of rows: Chunk / 8 threads a row (16 bytes each), kRowsPerPass rows a pass.
template <typename Tr>
struct ChunkLoader {
  int my_row;
  int my_col;              // [elements] within the chunk
  std::uint32_t smem_off;  // [bytes] within a tile

  __device__ __forceinline__ explicit ChunkLoader(int tid)
      : my_row(tid / Tr::kLanesPerRow),
        my_col((tid % Tr::kLanesPerRow) * 8),
        smem_off(static_cast<std::uint32_t>(
            ((tid / Tr::kLanesPerRow) * Tr::kStride + (tid % Tr::kLanesPerRow) * 8) * 2)) {}

  // Rows [row0, row0 + Rows), columns [col0, col0 + Chunk) of a BSHD head (row stride ld); rows at or
  // past row_limit and columns at or past d are zero-filled, so padding adds 0 to S and to O.
  template <int Rows, typename T>
  __device__ __forceinline__ void load(std::uint32_t s_tile, const T* g_head, int row0, int row_limit,
                                       int col0, int d, std::int64_t ld) const {
    const int col = col0 + my_col;
    const bool col_ok = col < d;
    const int rows_left = row_limit - row0 - my_row;
    const T* src = g_head + static_cast<std::int64_t>(row0 + my_row) * ld + col;
#pragma unroll
    for (int pass = 0; pass < Rows / Tr::kRowsPerPass; ++pass) {
      const bool ok = col_ok && pass * Tr::kRowsPerPass < rows_left;
      cp_async_16(s_tile + smem_off + static_cast<std::uint32_t>(pass * Tr::kRowsPerPass * Tr::kStrideB),
                  ok ? static_cast<const void*>(src) : static_cast<const void*>(g_head), ok ? 16 : 0);
      src += ld * Tr::kRowsPerPass;
    }
  }
};

// S fragment of one n8 tile: fp32 (4 values) or fp16 (2 packed pairs), rows g and g + 8.
template <bool AccF16>
using AccFrag = std::conditional_t<AccF16, std::uint32_t[2], float[4]>;

template <typename T>
__device__ __forceinline__ void mma_acc(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                        std::uint32_t b1) {
  mma_16816<T>(c, a, b0, b1);
}
template <typename T>
__device__ __forceinline__ void mma_acc(std::uint32_t (&c)[2], const std::uint32_t (&a)[4], std::uint32_t b0,
                                        std::uint32_t b1) {
  static_assert(std::is_same_v<T, __half>, "fp16 accumulation takes fp16 inputs");
  mma_16816_f16acc(c, a, b0, b1);
}

// The four values of a fragment as fp32 in the fp32 accumulator order (row g: 0, 1; row g + 8: 2, 3).
__device__ __forceinline__ void to_float4(const float (&c)[4], float (&f)[4]) {
#pragma unroll
  for (int e = 0; e < 4; ++e) f[e] = c[e];
}
__device__ __forceinline__ void to_float4(const std::uint32_t (&c)[2], float (&f)[4]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float2 v = __half22float2(*reinterpret_cast<const __half2*>(&c[r]));
    f[2 * r] = v.x;
    f[2 * r + 1] = v.y;
  }
}

template <typename T, typename Tr>
__global__ void __launch_bounds__(Tr::kThreads, Tr::kMinBlocks) ffpa_fwd_kernel(const FfpaParams p) {
  constexpr int Br = Tr::kBr, Bc = Tr::kBc, kWN = Tr::kWN, kKeysW = Tr::kKeysW, kColsW = Tr::kColsW;
  constexpr int kMT = Tr::kMT;     // m16 tiles of rows a warp holds
  constexpr int kRW = 16 * kMT;    // rows a warp holds
  constexpr int kRows = 2 * kMT;   // row slots a thread holds (rows g and g + 8 of each m16 tile)
  constexpr int kNT = kKeysW / 8;  // n8 tiles of S a warp holds
  constexpr int kCT = kColsW / 8;  // n8 tiles of each O chunk a warp holds
  constexpr int kKT = Bc / 16;     // k16 steps of P V
  constexpr bool kAccF16 = Tr::kAccF16;
  constexpr int kStrideB = Tr::kStrideB;
  constexpr int kChunk = Tr::kChunk;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const std::uint32_t a_buf0 = smem_addr(smem_raw);
  [[maybe_unused]] T* s_p = reinterpret_cast<T*>(smem_raw + Tr::kPOffset);
  [[maybe_unused]] float* s_max = reinterpret_cast<float*>(smem_raw + Tr::kStatsOffset);  // [kWN][Br]
  [[maybe_unused]] float* s_sum = s_max + kWN * Br;                                       // [kWN][Br]

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t4 = lane % 4;
  const int wm = warp % Tr::kWM, wn = warp / Tr::kWM;
  const int m_block = static_cast<int>(gridDim.x - 1 - blockIdx.x);  // heavy causal blocks first
  const int h = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int row0 = m_block * Br;
  const int D = p.head_dim;
  const int n_chunks = (D + kChunk - 1) / kChunk;

  const T* q_head = static_cast<const T*>(p.q) + fa2::q_head_offset(p, b, h, D);
  const std::int64_t kv_off = fa2::kv_head_offset(p, b, h, D);
  const T* k_head = static_cast<const T*>(p.k) + kv_off;
  const T* v_head = static_cast<const T*>(p.v) + kv_off;

  const int diag_off = p.seq_kv - p.seq_q;
  const KeyTiles keys = key_tiles(p, row0, Br, Bc);
  const int n_lo = keys.n_lo, n_hi = keys.n_hi, full_lo = keys.full_lo, full_hi = keys.full_hi;
  const int n_tiles = n_hi - n_lo;
  const int total_items = n_tiles * 2 * n_chunks;

  // The item stream: tile t = 0.. (keys n_hi - 1 - t), items 0..n_chunks-1 = Q+K chunks, then V chunks.
  const ChunkLoader<Tr> loader(tid);
  const std::uint32_t a_q =
      a_buf0 + static_cast<std::uint32_t>(Tr::kQOffset);  // Q resident: chunk c at c * Br rows
  if constexpr (Tr::kQResident) {
    for (int c = 0; c < n_chunks; ++c)
      loader.template load<Br>(a_q + static_cast<std::uint32_t>(c * Br * kStrideB), q_head, row0, p.seq_q,
                               c * kChunk, D, p.q_row_stride);
    cp_async_commit();  // the oldest group: complete once the first item's wait returns
  }
  int issued = 0, issue_tile = 0, issue_rem = 0;
  const auto issue_next = [&]() {
    if (issued < total_items) {
      const std::uint32_t dst = a_buf0 + static_cast<std::uint32_t>((issued % Tr::kBufs) * Tr::kBufBytes);
      const int n = n_hi - 1 - issue_tile;
      if (issue_rem < n_chunks) {
        const int col0 = issue_rem * kChunk;
        if constexpr (!Tr::kQResident)
          loader.template load<Br>(dst, q_head, row0, p.seq_q, col0, D, p.q_row_stride);
        loader.template load<Bc>(dst + (Tr::kBufRows - Bc) * kStrideB, k_head, n * Bc, p.seq_kv, col0, D,
                                 p.kv_row_stride);
      } else {
        loader.template load<Bc>(dst, v_head, n * Bc, p.seq_kv, (issue_rem - n_chunks) * kChunk, D,
                                 p.kv_row_stride);
      }
      if (++issue_rem == 2 * n_chunks) {
        issue_rem = 0;
        ++issue_tile;
      }
      ++issued;
    }
    cp_async_commit();  // empty groups past the end keep the wait count uniform
  };
#pragma unroll
  for (int s = 0; s < Tr::kStages; ++s) issue_next();
  int item = 0;
  // Waits for the next item, frees the buffer computed last (everyone passed the barrier) for the
  // item `stages` ahead, and returns the item's buffer.
  const auto next_item = [&]() -> std::uint32_t {
    cp_async_wait_group<Tr::kStages - 1>();
    __syncthreads();
    issue_next();
    const std::uint32_t buf = a_buf0 + static_cast<std::uint32_t>((item % Tr::kBufs) * Tr::kBufBytes);
    ++item;
    return buf;
  };

  // Per thread, kRows row slots: slot i is row g + 8 (i % 2) of the warp's m16 tile i / 2.
  const auto lrow = [&](int i) { return wm * kRW + 16 * (i / 2) + g + 8 * (i % 2); };  // local row
  AccFrag<kAccF16> o[kMT][Tr::kMaxChunks][kCT];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int c = 0; c < Tr::kMaxChunks; ++c)
#pragma unroll
      for (int j = 0; j < kCT; ++j)
#pragma unroll
        for (int e = 0; e < static_cast<int>(sizeof(o[mt][c][j]) / 4); ++e) {
          if constexpr (kAccF16)
            o[mt][c][j][e] = 0u;
          else
            o[mt][c][j][e] = 0.0f;
        }
  // acc_f32 keeps each row's partial sum over its own keys; acc_f16 the full row sum l (O is kept
  // normalised by it).
  float row_max[kRows], row_sum[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    row_max[i] = kNegInf;
    row_sum[i] = 0.0f;
  }

  // ldmatrix lane offsets [bytes] within a buffer (see fa2_kernel.cuh for the fragment layouts);
  // m16 tile mt of Q sits 16 rows below tile 0.
  const std::uint32_t q_lane =
      static_cast<std::uint32_t>((wm * kRW + (lane & 15)) * kStrideB + (lane >> 4) * 16);
  const std::uint32_t k_lane = static_cast<std::uint32_t>(
      (Tr::kBufRows - Bc + wn * kKeysW + (lane & 7) + ((lane >> 4) << 3)) * kStrideB +
      ((lane >> 3) & 1) * 16);
  const std::uint32_t v_lane = static_cast<std::uint32_t>(((lane & 7) + (((lane >> 3) & 1) << 3)) * kStrideB +
                                                          (lane >> 4) * 16 + wn * kColsW * 2);

  for (int tile = 0; tile < n_tiles; ++tile) {
    const int key0 = (n_hi - 1 - tile) * Bc;

    // ---- S = Q K^T over the Q+K items; each K fragment feeds the warp's kMT m16 tiles.
    AccFrag<kAccF16> s_acc[kMT][kNT];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int j = 0; j < kNT; ++j)
#pragma unroll
        for (int e = 0; e < static_cast<int>(sizeof(s_acc[mt][j]) / 4); ++e) {
          if constexpr (kAccF16)
            s_acc[mt][j][e] = 0u;
          else
            s_acc[mt][j][e] = 0.0f;
        }
#pragma unroll 1
    for (int c = 0; c < n_chunks; ++c) {
      const std::uint32_t buf = next_item();
      const int ksteps = min(kChunk, D - c * kChunk) / 16;  // D % 32 == 0: even
      const std::uint32_t q_chunk =
          Tr::kQResident ? a_q + static_cast<std::uint32_t>(c * Br * kStrideB) : buf;
#pragma unroll
      for (int kk = 0; kk < kChunk / 16; ++kk) {
        if (kk < ksteps) {
          std::uint32_t qa[kMT][4];
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt)
            ldmatrix_x4(q_chunk + q_lane + mt * 16 * kStrideB + kk * 32, qa[mt]);
#pragma unroll
          for (int nj = 0; nj < kKeysW / 16; ++nj) {
            std::uint32_t kb[4];
            ldmatrix_x4(buf + k_lane + nj * 16 * kStrideB + kk * 32, kb);
#pragma unroll
            for (int mt = 0; mt < kMT; ++mt) {
              mma_acc<T>(s_acc[mt][2 * nj], qa[mt], kb[0], kb[1]);
              mma_acc<T>(s_acc[mt][2 * nj + 1], qa[mt], kb[2], kb[3]);
            }
          }
        }
      }
    }
    float s[kMT][kNT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int j = 0; j < kNT; ++j) to_float4(s_acc[mt][j], s[mt][j]);

    // ---- mask: tiles crossing the band's edges or the end of the keys.
    if (key0 < full_lo || key0 + Bc > full_hi) {  // full_hi <= Sk: the key tail too
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        const int diag = row0 + lrow(i) + diag_off;
        const int first = p.left >= 0 ? max(0, diag - p.left) : 0;
        const int end = p.right >= 0 ? min(p.seq_kv, diag + p.right + 1) : p.seq_kv;
#pragma unroll
        for (int j = 0; j < kNT; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int key = key0 + wn * kKeysW + 8 * j + 2 * t4 + e;
            if (key < first || key >= end) s[i / 2][j][2 * (i % 2) + e] = kNegInf;
          }
      }
    }

    // ---- online softmax (fp32 state).
    float mx[kRows];
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      float m = kNegInf;
#pragma unroll
      for (int j = 0; j < kNT; ++j)
        m = fmaxf(m, fmaxf(s[i / 2][j][2 * (i % 2)], s[i / 2][j][2 * (i % 2) + 1]));
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
      mx[i] = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
    }
    if constexpr (kWN > 1) {
      if (t4 == 0) {
#pragma unroll
        for (int i = 0; i < kRows; ++i) s_max[wn * Br + lrow(i)] = mx[i];
      }
      __syncthreads();
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        float m = kNegInf;
#pragma unroll
        for (int w = 0; w < kWN; ++w) m = fmaxf(m, s_max[w * Br + lrow(i)]);
        mx[i] = m;
      }
    }
    float alpha[kRows], psum[kRows];
    std::uint32_t pa[kMT][kKT][4];  // P as the A operand of P V (filled here when kWN == 1)
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const float m_new = fmaxf(row_max[i], mx[i]);
      // A row with no visible key so far keeps max -inf: use 0 so exp2 sees -inf, not NaN.
      const float m_scaled = m_new == kNegInf ? 0.0f : m_new * p.scale_log2;
      alpha[i] = exp2_approx(row_max[i] * p.scale_log2 - m_scaled);
      row_max[i] = m_new;
      psum[i] = 0.0f;
#pragma unroll
      for (int j = 0; j < kNT; ++j) {
        const float p0 = exp2_approx(fmaf(s[i / 2][j][2 * (i % 2)], p.scale_log2, -m_scaled));
        const float p1 = exp2_approx(fmaf(s[i / 2][j][2 * (i % 2) + 1], p.scale_log2, -m_scaled));
        psum[i] += p0 + p1;
        const std::uint32_t pair = pack2<T>(p0, p1);
        if constexpr (kWN == 1) {
          pa[i / 2][j / 2][(j % 2) * 2 + i % 2] = pair;
        } else {
          *reinterpret_cast<std::uint32_t*>(s_p + lrow(i) * Tr::kPStride + wn * kKeysW + 8 * j + 2 * t4) =
              pair;
        }
      }
    }

    // O's update factors: acc_f32 rescales the unnormalised O by alpha now; acc_f16 needs the
    // tile's full row sum first (from the other key groups when kWN > 1, after the next barrier).
    float o_keep[kRows], p_scale[kRows];  // acc_f16: O = O * o_keep + (P V) * p_scale
    if constexpr (!kAccF16) {
#pragma unroll
      for (int i = 0; i < kRows; ++i) row_sum[i] = row_sum[i] * alpha[i] + psum[i];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int c = 0; c < Tr::kMaxChunks; ++c)
          if (c < n_chunks)
#pragma unroll
            for (int j = 0; j < kCT; ++j) {
              o[mt][c][j][0] *= alpha[2 * mt];
              o[mt][c][j][1] *= alpha[2 * mt];
              o[mt][c][j][2] *= alpha[2 * mt + 1];
              o[mt][c][j][3] *= alpha[2 * mt + 1];
            }
    } else {
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        psum[i] += __shfl_xor_sync(0xffffffffu, psum[i], 1);
        psum[i] += __shfl_xor_sync(0xffffffffu, psum[i], 2);
      }
      if constexpr (kWN > 1) {
        if (t4 == 0) {
#pragma unroll
          for (int i = 0; i < kRows; ++i) s_sum[wn * Br + lrow(i)] = psum[i];
        }
      }
    }

    // ---- O += P V over the V items; each V fragment feeds the warp's kMT m16 tiles.
#pragma unroll
    for (int c = 0; c < Tr::kMaxChunks; ++c) {
      if (c < n_chunks) {
        const std::uint32_t buf = next_item();
        if (c == 0) {
          if constexpr (kWN > 1) {
#pragma unroll
            for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
              for (int kk = 0; kk < kKT; ++kk)
                ldmatrix_x4(
                    a_buf0 + static_cast<std::uint32_t>(
                                 Tr::kPOffset + (wm * kRW + 16 * mt + (lane & 15)) * Tr::kPStride * 2 +
                                 kk * 32 + (lane >> 4) * 16),
                    pa[mt][kk]);
          }
          if constexpr (kAccF16) {
#pragma unroll
            for (int i = 0; i < kRows; ++i) {
              float tile_sum = psum[i];
              if constexpr (kWN > 1) {
                tile_sum = 0.0f;
#pragma unroll
                for (int w = 0; w < kWN; ++w) tile_sum += s_sum[w * Br + lrow(i)];
              }
              const float l_new = row_sum[i] * alpha[i] + tile_sum;
              o_keep[i] = l_new > 0.0f ? row_sum[i] * alpha[i] / l_new : 0.0f;
              p_scale[i] = l_new > 0.0f ? 1.0f / l_new : 0.0f;
              row_sum[i] = l_new;
            }
          }
        }
        const int col_base = c * kChunk + wn * kColsW;
#pragma unroll
        for (int dj = 0; dj < kColsW / 16; ++dj) {
          if (col_base + dj * 16 < D) {
            if constexpr (!kAccF16) {
#pragma unroll
              for (int kk = 0; kk < kKT; ++kk) {
                std::uint32_t vb[4];
                ldmatrix_x4_trans(buf + v_lane + kk * 16 * kStrideB + dj * 32, vb);
#pragma unroll
                for (int mt = 0; mt < kMT; ++mt) {
                  mma_acc<T>(o[mt][c][2 * dj], pa[mt][kk], vb[0], vb[1]);
                  mma_acc<T>(o[mt][c][2 * dj + 1], pa[mt][kk], vb[2], vb[3]);
                }
              }
            } else {
              std::uint32_t t[kMT][2][2];
#pragma unroll
              for (int mt = 0; mt < kMT; ++mt) t[mt][0][0] = t[mt][0][1] = t[mt][1][0] = t[mt][1][1] = 0u;
#pragma unroll
              for (int kk = 0; kk < kKT; ++kk) {
                std::uint32_t vb[4];
                ldmatrix_x4_trans(buf + v_lane + kk * 16 * kStrideB + dj * 32, vb);
#pragma unroll
                for (int mt = 0; mt < kMT; ++mt) {
                  mma_acc<T>(t[mt][0], pa[mt][kk], vb[0], vb[1]);
                  mma_acc<T>(t[mt][1], pa[mt][kk], vb[2], vb[3]);
                }
              }
#pragma unroll
              for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
                for (int half = 0; half < 2; ++half)
#pragma unroll
                  for (int r = 0; r < 2; ++r) {
                    const int i = 2 * mt + r;
                    const float2 ov =
                        __half22float2(*reinterpret_cast<const __half2*>(&o[mt][c][2 * dj + half][r]));
                    const float2 tv = __half22float2(*reinterpret_cast<const __half2*>(&t[mt][half][r]));
                    o[mt][c][2 * dj + half][r] = pack2<__half>(fmaf(tv.x, p_scale[i], ov.x * o_keep[i]),
                                                               fmaf(tv.y, p_scale[i], ov.y * o_keep[i]));
                  }
            }
          }
        }
      }
    }
  }

  // ---- epilogue: the full row sum, O / l (acc_f32), LSE.
  float l[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    l[i] = row_sum[i];
    if constexpr (!kAccF16) {
      l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
      l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
    }
  }
  if constexpr (!kAccF16 && kWN > 1) {
    if (t4 == 0) {  // s_sum is free: acc_f32 does not use it in the main loop
#pragma unroll
      for (int i = 0; i < kRows; ++i) s_sum[wn * Br + lrow(i)] = l[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      l[i] = 0.0f;
#pragma unroll
      for (int w = 0; w < kWN; ++w) l[i] += s_sum[w * Br + lrow(i)];
    }
  }
  cp_async_wait_all();
  T* o_head = static_cast<T*>(p.o) + fa2::q_head_offset(p, b, h, D);
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int row = row0 + lrow(i);
    if (row >= p.seq_q) continue;
    // acc_f16's O is already normalised; a row with no visible key has O = 0 either way.
    const float inv = kAccF16 ? 1.0f : (l[i] > 0.0f ? 1.0f / l[i] : 0.0f);
    T* o_row = o_head + static_cast<std::int64_t>(row) * p.q_row_stride;
#pragma unroll
    for (int c = 0; c < Tr::kMaxChunks; ++c)
      if (c < n_chunks)
#pragma unroll
        for (int j = 0; j < kCT; ++j) {
          const int col = c * kChunk + wn * kColsW + 8 * j + 2 * t4;
          if (col < D) {
            float f[4];
            to_float4(o[i / 2][c][j], f);
            *reinterpret_cast<std::uint32_t*>(o_row + col) =
                pack2<T>(f[2 * (i % 2)] * inv, f[2 * (i % 2) + 1] * inv);
          }
        }
    if (p.lse != nullptr && wn == 0 && t4 == 0) {
      const float lse =
          l[i] > 0.0f ? (row_max[i] * p.scale_log2 + log2f(l[i])) * 0.6931471805599453f : kNegInf;
      p.lse[(static_cast<std::int64_t>(b) * p.heads_q + h) * p.seq_q + row] = lse;
    }
  }
}

}  // namespace attn::ffpa
