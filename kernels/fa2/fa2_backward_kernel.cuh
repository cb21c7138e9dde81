// fa2.mma's backward kernels (included by fa2_backward.cu and fa2_backward_wide.cu, which instantiate
// launch<T, D> for their head dims): FlashAttention-2's backward (Dao 2023, algorithm 2) on mma.sync
// m16n8k16. One CTA of 8 warps per (key block, KV head, batch); it loops over the query heads of its
// KV group and the query blocks (queries_per_step) that see the key block, so dK and dV stay in
// registers and need no atomics. Up to D 128 the key block is 128 keys and warp w owns keys
// 16w..16w+15; per query block:
//   S^T = K_w Q^T, P^T = exp2(S^T scale log2e - LSE log2e) (masked: 0), dV_w += P^T dO,
//   dP^T = V_w dO^T, dS'^T = P^T (dP^T - D), dK_w += dS'^T Q,
// then dS'^T goes to shared memory and the 8 warps split dQ' += dS' K into 16-row tiles, added to an
// fp32 accumulator in global memory with atomics. Above D 128 (d_split) warp pairs share 16 keys of
// a 64-key block and each keeps half of D's columns of dK and dV, forming S^T and dP^T over its half
// and adding its partner's (pair_sum). The softmax scale is applied once, to dK at the end and to dQ
// in the conversion (dS = dS' scale). A pre-pass forms D = rowsum(dO * O), LSE log2(e), and zeroes the
// accumulator; a post-pass converts it to the dtype. Operands are staged in shared memory rows
// padded by 16 bytes (ldmatrix without bank conflicts); later query blocks' Q, dO, LSE and D load
// (cp.async) while this one computes.
//
// Why 128 keys and 8 warps (v4; v3 had 64 and 4): every query block's Q, dO and dQ atomics serve
// twice the keys, and ncu counted v3's instructions at 2.15x FlashAttention-2's for the same work
// (docs/PERF.md, "fa2.mma backward v4-v6").
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/common/mma_ptx.cuh"
#include "kernels/fa2/fa2_backward_parts.cuh"
#include "kernels/reference/device_mask.hpp"
#include "kernels/reference/device_types.cuh"

namespace attn::fa2::bwd {

// dsum[b, h, i] = sum_d dO * O, and the dQ accumulator zeroed; one warp per query row. A varlen
// batch's row sums are token-major, [total_q, Hq], the layout of its rows (no search for the
// sequence of a row). LSE log2(e) too, element by element: LSE has one element per row in either
// layout, so the row's flat index is an LSE index.
template <typename T, int D>
__global__ void row_sums_kernel(BwdParams p) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= p.total_q * p.heads_q) return;
  std::int64_t at = row * D;
  if (p.cu_q == nullptr) {
    const std::int64_t bh = row / p.seq_q, i = row % p.seq_q, b = bh / p.heads_q, h = bh % p.heads_q;
    at = ((b * p.seq_q + i) * p.heads_q + h) * D;
  }
  const T* o = static_cast<const T*>(p.o) + at;
  const T* d_o = static_cast<const T*>(p.d_o) + at;
  float s = 0.0f;
  for (int d = lane; d < D; d += 32) {
    s = fmaf(to_float(o[d]), to_float(d_o[d]), s);
    p.dq_acc[at + d] = 0.0f;
  }
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (lane == 0) {
    p.row_sums[row] = s;
    p.lse_log2[row] = p.lse[row] * kLog2e;
  }
}

// dQ = dQ' scale in the dtype.
template <typename T, int D>
__global__ void dq_convert_kernel(BwdParams p, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    static_cast<T*>(p.dq)[i] = from_float<T>(p.dq_acc[i] * p.scale);
}

// kVarlen: blockIdx.z is a sequence of a packed varlen batch (its own lengths, rows at the prefix
// sums, LSE blocks [Hq, len] at Hq x its first row); a key block past its keys returns at once. A
// dense launch compiles none of it.
template <typename T, int D, bool kVarlen>
__global__ void __launch_bounds__(kThreads, ctas_per_sm<D, kVarlen>()) key_block_kernel(BwdParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int kQueries = queries_per_step<D>(), kQTiles = kQueries / 8, kKeys = keys_per_cta<D>();
  constexpr int kSplit = d_split<D>(), kKeyWarps = kWarps / kSplit, kDPart = D / kSplit,
                kBuf = q_buffers<D>();
  // dP^T is formed in parts of at most 64 queries (two at D 64), each reloading the warp's V rows (A).
  constexpr int kDpPart = kQueries < 64 ? kQueries : 64;
  constexpr int kLd = row_elems<D>(), kDsLd = kQueries + 8;
  T* k_s = reinterpret_cast<T*>(smem);
  T* v_s = k_s + kKeys * kLd;
  // Buffers as base + buffer * stride (not arrays of pointers, which would live on the stack).
  T* const q_buf0 = v_s + kKeys * kLd;
  T* const do_buf0 = q_buf0 + kBuf * kQueries * kLd;
  T* ds_s = do_buf0 + kBuf * kQueries * kLd;
  float* const lse_buf0 = reinterpret_cast<float*>(ds_s + kKeys * kDsLd);
  float* const dsum_buf0 = lse_buf0 + kBuf * kQueries;
  int* const bounds_s = reinterpret_cast<int*>(dsum_buf0 + kBuf * kQueries);
  float4* const xbuf_s = reinterpret_cast<float4*>(bounds_s + 8);  // S^T's exchange, then dP^T's
  float4* const xbuf_dp = xbuf_s + kQTiles * kWarps * 32;

  const int j0 = blockIdx.x * kKeys, hk = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  // The warp's 16 keys (kw) and, with a D split, its part of D (kd); its partner shares the keys.
  const int kw = kSplit == 1 ? warp : warp % kKeyWarps, kd = kSplit == 1 ? 0 : warp / kKeyWarps;
  const std::int64_t q_ld = static_cast<std::int64_t>(p.heads_q) * D,
                     kv_ld = static_cast<std::int64_t>(p.heads_kv) * D;
  // The sequence's lengths, first rows and mask: the parameters' for a dense launch.
  int seq_q = p.seq_q, seq_kv = p.seq_kv;
  std::int64_t q_row0 = static_cast<std::int64_t>(b) * p.seq_q,
               kv_row0 = static_cast<std::int64_t>(b) * p.seq_kv;
  DeviceMask mask = p.mask;
  if constexpr (kVarlen) {
    const int sq = p.seq_order[b];  // the longest sequences' key blocks first
    q_row0 = p.cu_q[sq];
    kv_row0 = p.cu_kv[sq];
    seq_q = p.cu_q[sq + 1] - static_cast<int>(q_row0);
    seq_kv = p.cu_kv[sq + 1] - static_cast<int>(kv_row0);
    if (j0 >= seq_kv) return;  // the whole block: before any barrier
    mask.seq_q = seq_q;
    mask.seq_kv = seq_kv;
  }
  const T* k_base = static_cast<const T*>(p.k) + (kv_row0 * p.heads_kv + hk) * D;
  const T* v_base = static_cast<const T*>(p.v) + (kv_row0 * p.heads_kv + hk) * D;
  load_tile<D, kKeys>(k_s, k_base, kv_ld, j0, seq_kv);
  load_tile<D, kKeys>(v_s, v_base, kv_ld, j0, seq_kv);
  ptx::cp_async_commit();

  float dk[kDPart / 8][4] = {}, dv[kDPart / 8][4] = {};
  const int j_last = min(j0 + kKeys, seq_kv) - 1;  // the block's last real key
  // ldmatrix lane addresses (see the m16n8k16 fragment layouts): A row-major, B stored [n][k]
  // (non-transposed load), B stored [k][n] and A stored [k][m] (transposed loads).
  const int a_row = lane % 16, a_col = (lane / 16) * 8;
  const int bn_row = (lane % 8) + 8 * (lane / 16), bn_col = 8 * ((lane / 8) % 2);
  const int bt_row = (lane % 8) + 8 * ((lane / 8) % 2), bt_col = 8 * (lane / 16);
  const int at_row = (lane % 8) + 8 * (lane / 16), at_col = 8 * ((lane / 8) % 2);
  const int a_lane = (kw * 16 + a_row) * kLd + a_col + kd * kDPart,
            b_lane = bn_row * kLd + bn_col + kd * kDPart;
  // dQ's warp tile: queries dq_row0.. (kDqRows), columns dq_col0.. (kDqCols): the 8 warps over
  // kQueries x D as kQueries / 16 row groups of 128 / kQueries column parts. (32 x 32 tiles would take
  // 4 ldmatrix for 8 MMAs against 5 at 16 rows, but spilled at D 64 on sm_90 and for varlen D 128 on
  // sm_80/89.)
  constexpr int kDqRows = 16, kDqRowGroups = kQueries / kDqRows;
  constexpr int kDqCols = D * kQueries / (8 * kDqRows), kDqM = kDqRows / 16;
  static_assert(kDqCols % 16 == 0, "dQ's warp tile: whole 16-column ldmatrix loads");
  const int dq_row0 = (warp % kDqRowGroups) * kDqRows, dq_col0 = (warp / kDqRowGroups) * kDqCols;

  // The query blocks [blk_begin, blk_end) that see this key block form one range, since first(i)
  // and last(i) never decrease with i, and it is the same for every query head of the group; so do
  // the blocks [full_begin, full_end) whose every (query, key) pair is visible. Each bound is a
  // binary search over a monotone test, once per CTA rather than a mask evaluation per step.
  const int blocks_q = (seq_q + kQueries - 1) / kQueries;
  auto first_true = [&](int lo, int hi, auto&& test) {  // test: false ... false true ... true
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (test(mid))
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  };
  auto row_last = [&](int blk) { return min((blk + 1) * kQueries, seq_q) - 1; };
  const int blk_begin = first_true(0, blocks_q, [&](int blk) { return mask.last(row_last(blk)) > j0; });
  const int blk_end =
      first_true(blk_begin, blocks_q, [&](int blk) { return mask.first(blk * kQueries) > j_last; });
  const int full_begin =
      first_true(blk_begin, blk_end, [&](int blk) { return mask.last(blk * kQueries) > j_last; });
  int full_end = first_true(full_begin, blk_end, [&](int blk) {
    return (blk + 1) * kQueries > seq_q || mask.first(row_last(blk)) > j0;
  });
  if (j0 + kKeys > seq_kv) full_end = full_begin;
  // The loop reads the bounds and the first query row from shared memory (and the batch index
  // from ctaid): at D 128 the registers hold dK, dV, P^T and dP^T, and these, kept live, spilled.
  if (threadIdx.x == 0) {
    bounds_s[0] = blk_begin;
    bounds_s[1] = blk_end;
    bounds_s[2] = full_begin;
    bounds_s[3] = full_end;
    bounds_s[4] = static_cast<int>(q_row0);  // rows < 2^31 (Problem's limits)
    bounds_s[5] = seq_q;
    bounds_s[6] = seq_kv;
  }
  // The sequence's lengths and mask inside the loop: the parameters' for a dense launch.
  auto len_q = [&] { return kVarlen ? bounds_s[5] : p.seq_q; };
  auto len_kv = [&] { return kVarlen ? bounds_s[6] : p.seq_kv; };
  auto loop_mask = [&] {
    DeviceMask m = p.mask;
    if constexpr (kVarlen) {
      m.seq_q = len_q();
      m.seq_kv = len_kv();
    }
    return m;
  };
  // The work items: (query head of the group, query block in [blk_begin, blk_end)), walked by a
  // cursor (no division per step). With two buffers items n + 1 and n + 2 load while n computes
  // (n + 2 goes to n's once n's readers are done); with one, n + 1 loads during n's dQ. The cursor
  // of the item to load is derived when it is needed, not kept.
  const int h_end = blk_end > blk_begin ? (hk + 1) * p.group : hk * p.group;
  struct Cursor {
    int h, blk;
  };
  auto step = [&](Cursor& c) {
    if (++c.blk == bounds_s[1]) {
      c.blk = bounds_s[0];
      ++c.h;
    }
  };
  auto issue = [&](Cursor c, int buf) {
    const int h = c.h, i0 = c.blk * kQueries;
    const std::int64_t q_row0 = bounds_s[4], b = ptx::ctaid_z();
    const std::int64_t head = (q_row0 * p.heads_q + h) * D;
    load_tile<D, kQueries>(q_buf0 + buf * kQueries * kLd, static_cast<const T*>(p.q) + head, q_ld, i0,
                           len_q());
    load_tile<D, kQueries>(do_buf0 + buf * kQueries * kLd, static_cast<const T*>(p.d_o) + head, q_ld, i0,
                           len_q());
    // LSE log2(e) in LSE's layout [B, Hq, Sq] (varlen: the sequence's [Hq, len] block at Hq x its first
    // row); the row sums as row_sums_kernel wrote them. Rows past the end read as 0 (masked below).
    const int r = threadIdx.x % kQueries;
    const bool in = i0 + r < len_q();
    if (threadIdx.x < kQueries) {
      const std::int64_t lse_at = (kVarlen ? q_row0 * p.heads_q + static_cast<std::int64_t>(h) * len_q()
                                           : (b * p.heads_q + h) * len_q()) +
                                  i0 + r;
      ptx::cp_async_4(ptx::smem_addr(lse_buf0 + buf * kQueries + r), p.lse_log2 + (in ? lse_at : 0),
                      in ? 4 : 0);
    } else if (threadIdx.x < 2 * kQueries) {
      const std::int64_t sum_at =
          kVarlen ? (q_row0 + i0 + r) * p.heads_q + h : (b * p.heads_q + h) * len_q() + i0 + r;
      ptx::cp_async_4(ptx::smem_addr(dsum_buf0 + buf * kQueries + r), p.row_sums + (in ? sum_at : 0),
                      in ? 4 : 0);
    }
  };
  __syncthreads();  // the bounds, before any thread reads them
  Cursor at{hk * p.group, blk_begin};
  if (at.h < h_end) issue(at, 0);
  ptx::cp_async_commit();
  if constexpr (kBuf == 2) {
    if (blk_begin + 1 < blk_end) {
      issue(Cursor{at.h, blk_begin + 1}, 1);
    } else if (at.h + 1 < h_end) {
      issue(Cursor{at.h + 1, blk_begin}, 1);
    }
  }
  ptx::cp_async_commit();
  const float scale_log2 = p.scale * kLog2e;
  for (int cur = 0; at.h < h_end; cur = (cur + 1) % kBuf) {
    const int h = at.h, i0 = at.blk * kQueries;
    const bool full = at.blk >= bounds_s[2] && at.blk < bounds_s[3];
    const T* q_s = q_buf0 + cur * kQueries * kLd;
    const T* do_s = do_buf0 + cur * kQueries * kLd;
    const float* lse_s = lse_buf0 + cur * kQueries;
    const float* dsum_s = dsum_buf0 + cur * kQueries;
    // Item n's loads (and K, V) landed; with two buffers n + 1's may be in flight. The barrier also
    // ends item n - 1's reads of dS'^T and of the exchange buffers.
    ptx::cp_async_wait_group<kBuf - 1>();
    __syncthreads();

    {
      // S^T [16 keys x kQueries] = K_w Q^T (over the warp's part of D, then the pair's sum).
      float s[kQTiles][4] = {};
      warp_gemm_abt<D, kDPart, kQTiles / 2>(k_s, q_s, a_lane, b_lane, s);
      if constexpr (kSplit == 2) pair_sum(s, xbuf_s, warp, warp ^ kKeyWarps, lane, 1 + kw);
      // P^T, 0 where masked (a row with no visible key has LSE -inf and is all masked). A block whose
      // every (query, key) pair is visible takes the path without the per-element test; it is the
      // common one, so it is its own code, not a predicate.
      if (full) {
#pragma unroll
        for (int nt = 0; nt < kQTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int c = nt * 8 + 2 * t + (e % 2);
            s[nt][e] = ptx::exp2_approx(fmaf(s[nt][e], scale_log2, -lse_s[c]));
          }
      } else {
        // Each query's visible keys as a range relative to the warp's first key, once per query
        // (the thread holds two queries per n-tile), then a range test per element.
        const int jw = j0 + kw * 16;
#pragma unroll
        for (int nt = 0; nt < kQTiles; ++nt)
#pragma unroll
          for (int cc = 0; cc < 2; ++cc) {
            const int c = nt * 8 + 2 * t + cc, i = i0 + c;
            int lo = 0, hi = 0;  // an empty range past the last query
            if (i < len_q()) {
              const DeviceMask m = loop_mask();
              const std::int64_t last = m.last(i), limit = len_kv();
              lo = static_cast<int>(m.first(i) - jw);
              hi = static_cast<int>((last < limit ? last : limit) - jw);
            }
#pragma unroll
            for (int half = 0; half < 2; ++half) {
              const int r = g + 8 * half, e = 2 * half + cc;
              s[nt][e] = r >= lo && r < hi ? ptx::exp2_approx(fmaf(s[nt][e], scale_log2, -lse_s[c])) : 0.0f;
            }
          }
      }
      // dV_w [16 x kDPart] += P^T [16 x kQueries] dO [kQueries x kDPart].
#pragma unroll
      for (int kc = 0; kc < kQTiles / 2; ++kc) {
        std::uint32_t a[4];
        pack_a<T>(s, kc, a);
        warp_gemm_a_regs<D, kDPart>(a, do_s, kc * 16, kd * kDPart, bt_row, bt_col, dv);
      }
      // dP^T [16 x kQueries] = V_w dO^T, then dS'^T = P^T (dP^T - D) in place of P^T, in parts of
      // kDpPart queries.
#pragma unroll
      for (int part = 0; part < kQueries / kDpPart; ++part) {
        float dp[kDpPart / 8][4] = {};
        warp_gemm_abt<D, kDPart, kDpPart / 16>(v_s, do_s + part * kDpPart * kLd, a_lane, b_lane, dp);
        if constexpr (kSplit == 2) pair_sum(dp, xbuf_dp, warp, warp ^ kKeyWarps, lane, 1 + kw);
#pragma unroll
        for (int nt = 0; nt < kDpPart / 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int c = part * kDpPart + nt * 8 + 2 * t + (e % 2);
            s[part * (kDpPart / 8) + nt][e] *= dp[nt][e] - dsum_s[c];
          }
      }
      // dK_w [16 x kDPart] += dS'^T [16 x kQueries] Q [kQueries x kDPart]; dS'^T to shared memory for
      // dQ (by one warp of a pair: both hold the same).
#pragma unroll
      for (int kc = 0; kc < kQTiles / 2; ++kc) {
        std::uint32_t a[4];
        pack_a<T>(s, kc, a);
        if (kd == 0) {
          std::uint32_t* row_g =
              reinterpret_cast<std::uint32_t*>(ds_s + (kw * 16 + g) * kDsLd + kc * 16 + 2 * t);
          std::uint32_t* row_g8 =
              reinterpret_cast<std::uint32_t*>(ds_s + (kw * 16 + g + 8) * kDsLd + kc * 16 + 2 * t);
          row_g[0] = a[0];
          row_g8[0] = a[1];
          row_g[4] = a[2];  // 8 elements further: the second n-tile of this k chunk
          row_g8[4] = a[3];
        }
        warp_gemm_a_regs<D, kDPart>(a, q_s, kc * 16, kd * kDPart, bt_row, bt_col, dk);
      }
    }
    __syncthreads();  // dS'^T complete, and every read of buffer `cur` done: item n + kBuf loads into it
    {
      Cursor next = at;
#pragma unroll
      for (int k = 0; k < kBuf; ++k) step(next);
      if (next.h < h_end) issue(next, cur);
      ptx::cp_async_commit();
    }

    {
      // dQ' [kDqRows queries x kDqCols] += dS' [kDqRows x kKeys] K [kKeys x kDqCols], in chunks of at
      // most 64 columns (the accumulators beside dK and dV: D 256 spilled with whole rows).
      constexpr int kLoads = kDqCols / 16, kChunkLoads = kLoads < 4 ? kLoads : 4;
#pragma unroll
      for (int c0 = 0; c0 < kLoads; c0 += kChunkLoads) {
        float acc[kDqM][2 * kChunkLoads][4] = {};
#pragma unroll
        for (int kc = 0; kc < kKeys / 16; ++kc) {
          std::uint32_t a[kDqM][4];
#pragma unroll
          for (int mt = 0; mt < kDqM; ++mt)
            ptx::ldmatrix_x4_trans(
                ptx::smem_addr(ds_s + (kc * 16 + at_row) * kDsLd + dq_row0 + mt * 16 + at_col), a[mt]);
#pragma unroll
          for (int np = 0; np < kChunkLoads; ++np) {
            if (c0 + np >= kLoads) continue;
            std::uint32_t bk[4];
            ptx::ldmatrix_x4_trans(
                ptx::smem_addr(k_s + (kc * 16 + bt_row) * kLd + dq_col0 + (c0 + np) * 16 + bt_col), bk);
#pragma unroll
            for (int mt = 0; mt < kDqM; ++mt) {
              ptx::mma_16816<T>(acc[mt][2 * np], a[mt], bk[0], bk[1]);
              ptx::mma_16816<T>(acc[mt][2 * np + 1], a[mt], bk[2], bk[3]);
            }
          }
        }
#pragma unroll
        for (int rh = 0; rh < 2 * kDqM; ++rh) {
          const int mt = rh / 2, half = rh % 2;
          const int i = i0 + dq_row0 + 16 * mt + g + 8 * half;
          if (i >= len_q()) continue;
          float* row = p.dq_acc + ((bounds_s[4] + static_cast<std::int64_t>(i)) * p.heads_q + h) * D +
                       dq_col0 + c0 * 16 + 2 * t;
#pragma unroll
          for (int nt = 0; nt < 2 * kChunkLoads; ++nt) {
            if (c0 * 2 + nt >= kDqCols / 8) continue;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
            atomicAdd(reinterpret_cast<float2*>(row + nt * 8),
                      make_float2(acc[mt][nt][2 * half], acc[mt][nt][2 * half + 1]));
#else
            atomicAdd(row + nt * 8, acc[mt][nt][2 * half]);
            atomicAdd(row + nt * 8 + 1, acc[mt][nt][2 * half + 1]);
#endif
          }
        }
      }
    }
    step(at);
  }

  // dK = dK' scale and dV of the warp's 16 keys (and part of D). The block's coordinates and key range are
  // read again (opaquely) rather than kept live across the loop, where sm_80 would spill them.
  const int e_j0 = ptx::ctaid_x() * kKeys, e_hk = ptx::ctaid_y();
  std::int64_t e_kv_row0 = static_cast<std::int64_t>(ptx::ctaid_z()) * p.seq_kv;
  int e_seq_kv = p.seq_kv;
  if constexpr (kVarlen) {
    const int sq = p.seq_order[ptx::ctaid_z()];
    e_kv_row0 = p.cu_kv[sq];
    e_seq_kv = p.cu_kv[sq + 1] - static_cast<int>(e_kv_row0);
  }
  T* dk_base = static_cast<T*>(p.dk) + (e_kv_row0 * p.heads_kv + e_hk) * D;
  T* dv_base = static_cast<T*>(p.dv) + (e_kv_row0 * p.heads_kv + e_hk) * D;
#pragma unroll
  for (int nt = 0; nt < kDPart / 8; ++nt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int j = e_j0 + kw * 16 + g + 8 * half;
      if (j >= e_seq_kv) continue;
      const int d = kd * kDPart + nt * 8 + 2 * t;
      const std::int64_t at = static_cast<std::int64_t>(j) * kv_ld + d;
      dk_base[at] = from_float<T>(dk[nt][2 * half] * p.scale);
      dk_base[at + 1] = from_float<T>(dk[nt][2 * half + 1] * p.scale);
      dv_base[at] = from_float<T>(dv[nt][2 * half]);
      dv_base[at + 1] = from_float<T>(dv[nt][2 * half + 1]);
    }
}

template <typename T, int D, bool kVarlen>
void launch_key_blocks(const Problem& pr, const BwdParams& prm, cudaStream_t stream) {
  constexpr std::size_t kSmem = smem_bytes<D>();
  constexpr int kKeys = keys_per_cta<D>();
  static const bool attr = [] {
    ATTN_CUDA_CHECK(cudaFuncSetAttribute(key_block_kernel<T, D, kVarlen>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(kSmem)));
    return true;
  }();
  (void)attr;
  // A varlen batch: seq_kv is the longest sequence's; shorter ones return from their extra blocks.
  const dim3 grid(static_cast<unsigned>((pr.seq_kv + kKeys - 1) / kKeys), static_cast<unsigned>(pr.heads_kv),
                  static_cast<unsigned>(pr.batch));
  key_block_kernel<T, D, kVarlen><<<grid, kThreads, kSmem, stream>>>(prm);
  ATTN_CUDA_CHECK_LAUNCH("fa2.mma backward key_block_kernel");
}

template <typename T, int D>
void launch(const Problem& pr, const BwdParams& prm, cudaStream_t stream) {
  const std::int64_t rows = prm.total_q * pr.heads_q;
  row_sums_kernel<T, D><<<static_cast<unsigned>((rows + 3) / 4), 128, 0, stream>>>(prm);
  ATTN_CUDA_CHECK_LAUNCH("fa2.mma backward row_sums_kernel");
  if (prm.cu_q != nullptr)
    launch_key_blocks<T, D, true>(pr, prm, stream);
  else
    launch_key_blocks<T, D, false>(pr, prm, stream);
  const std::int64_t n = pr.q_elems();
  const std::int64_t want = (n + 255) / 256;
  dq_convert_kernel<T, D><<<static_cast<unsigned>(want < 4096 ? want : 4096), 256, 0, stream>>>(prm, n);
  ATTN_CUDA_CHECK_LAUNCH("fa2.mma backward dq_convert_kernel");
}

}  // namespace attn::fa2::bwd
