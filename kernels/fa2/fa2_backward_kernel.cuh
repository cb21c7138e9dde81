// fa2.mma's backward kernels (included by fa2_backward.cu and fa2_backward_wide.cu, which instantiate
// launch<T, D> for their head dims): FlashAttention-2's backward (Dao 2023, algorithm 2) on mma.sync
// m16n8k16. One CTA of 8 warps per (key block, KV head, batch); it loops over the query heads of its
// KV group and the query blocks that see the key block, so dK and dV stay in registers and need no
// atomics. Per query block of Tiles<D>::kQueries queries:
//   S = Q K^T, P = exp2(S scale log2e - LSE log2e) (masked: 0), dP = dO V^T, dS' = P (dP - D),
// each warp over its 2-D tile of [queries x keys]; P and dS' go to shared memory; after one barrier
//   dV += P^T dO, dK += dS'^T Q (each warp a [keys x D] tile of its registers' dK and dV),
//   dQ' += dS' K (each warp a [queries x D] tile, added to an fp32 accumulator with atomics).
// The softmax scale is applied once, to dK at the end and to dQ in the conversion (dS = dS' scale). A
// memset zeroes the accumulator, a pre-pass forms D = rowsum(dO * O) and LSE log2(e), a post-pass
// converts the accumulator to the dtype. Q, K, V and dO are staged in shared memory rows XOR-swizzled
// (D 64, 128, 192, 256) or padded by 16 bytes (Tiles::kSwizzle; ldmatrix without bank conflicts either
// way); the next query block's Q, dO, LSE and D load (cp.async) while this one computes (the lean
// tiles, one buffer: once dK and dV have read it, under dQ's GEMM).
//
// Why 2-D warp tiles with P and dS' through shared memory (v7; v4-v6 gave each warp 16 keys and
// every query, P^T and dS'^T staying in its registers): each operand row is read by fewer warps, and
// v6's shared-memory pipe was its bottleneck (ncu: 78% busy against FlashAttention-2's 69%, short
// scoreboard stalls 3.0 against 2.0 an instruction). It also needs no D split above D 128, whose
// warp-pair exchange cost 0.67-0.87 of FA2 there (docs/PERF.md, "fa2.mma backward v7").
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/common/mma_ptx.cuh"
#include "kernels/fa2/fa2_backward_parts.cuh"
#include "kernels/reference/device_mask.hpp"
#include "kernels/reference/device_types.cuh"

namespace attn::fa2::bwd {

// Lanes a query row in row_sums_kernel: its D / 8 16-byte chunks rounded up to a power of two (a
// shuffle tree), so D 32 takes 8 rows a warp and D 256 one.
template <int D>
constexpr int row_sum_lanes() {
  constexpr int kChunks = D / 8;
  return kChunks <= 4 ? 4 : kChunks <= 8 ? 8 : kChunks <= 16 ? 16 : 32;
}
template <int D>
constexpr int row_sum_rows_per_block(int threads) {
  return threads / row_sum_lanes<D>();
}

// dsum[b, h, i] = sum_d dO * O, row_sum_lanes<D>() lanes a query row, each lane one 16-byte chunk of O
// and of dO (a warp a row, 2 bytes a lane a load, took 148 us where this takes 56 at D 64 S 2048: ncu).
// A varlen batch's row sums are token-major, [total_q, Hq], the layout of its rows (no search for the
// sequence of a row). LSE log2(e) too, element by element: LSE has one element per row in either
// layout, so the row's flat index is an LSE index.
template <typename T, int D>
__global__ void row_sums_kernel(BwdParams p) {
  constexpr int kChunks = D / 8, kLanes = row_sum_lanes<D>();
  static_assert(D % 8 == 0 && kChunks <= 32);
  const int sub = static_cast<int>(threadIdx.x) % kLanes;
  const std::int64_t row =
      static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / kLanes) + threadIdx.x / kLanes;
  const bool live = row < p.total_q * p.heads_q;  // no early return: every lane takes part in the shuffles
  float s = 0.0f;
  if (live && sub < kChunks) {
    std::int64_t token = row / p.heads_q, h = row % p.heads_q;  // a varlen batch's rows: token-major
    if (p.cu_q == nullptr) {
      const std::int64_t bh = row / p.seq_q, i = row % p.seq_q, b = bh / p.heads_q;
      token = b * p.seq_q + i;
      h = bh % p.heads_q;
    }
    const std::int64_t at = (token * p.heads_q + h) * D + sub * 8;
    const uint4 o = *reinterpret_cast<const uint4*>(static_cast<const T*>(p.o) + at);
    const uint4 d_o = *reinterpret_cast<const uint4*>(static_cast<const T*>(p.d_o) + at);
    const T* oe = reinterpret_cast<const T*>(&o);
    const T* de = reinterpret_cast<const T*>(&d_o);
#pragma unroll
    for (int e = 0; e < 8; ++e) s = fmaf(to_float(oe[e]), to_float(de[e]), s);
  }
#pragma unroll
  for (int off = kLanes / 2; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (live && sub == 0) {
    p.row_sums[row] = s;
    p.lse_log2[row] = p.lse[row] * kLog2e;
  }
}

// dQ = dQ' scale in the dtype [tokens, Hq, D], one CTA per (query block, query head, sequence): it
// reads the block's accumulator region in order, a float4 a thread (one atomic's quadruple: two columns
// of rows r and r + 8, dq_acc_index), into a shared [queries][D] tile in the dtype, then writes the
// tile's rows with 16-byte stores (written from the quadruples, the stores were 4 bytes each).
template <typename T, int D>
__global__ void dq_convert_kernel(BwdParams p) {
  // Rows padded by 16 bytes: a quadruple store's 8 rows fall in distinct banks.
  constexpr int kQueries = Tiles<D>::kQueries, kLd = D + 8, kChunks = D / 8;
  __shared__ __align__(16) T tile[kQueries * kLd];
  const int blk = blockIdx.x, h = blockIdx.y, seq = blockIdx.z;
  std::int64_t first = static_cast<std::int64_t>(seq) * p.seq_q;
  int len = p.seq_q;
  if (p.cu_q != nullptr) {
    first = p.cu_q[seq];
    len = p.cu_q[seq + 1] - static_cast<int>(first);
  }
  if (blk * kQueries >= len) return;
  const float* region =
      p.dq_acc + (static_cast<std::int64_t>(h) * p.acc_rows + first + (seq + blk) * kQueries) * D;
  for (int at = 4 * static_cast<int>(threadIdx.x); at < kQueries * D; at += 4 * blockDim.x) {
    int row = 0, col = 0;
    dq_acc_cell<D>(at, row, col);
    const float4 c = *reinterpret_cast<const float4*>(region + at);
    *reinterpret_cast<std::uint32_t*>(tile + row * kLd + col) = ptx::pack2<T>(c.x * p.scale, c.y * p.scale);
    *reinterpret_cast<std::uint32_t*>(tile + (row + 8) * kLd + col) =
        ptx::pack2<T>(c.z * p.scale, c.w * p.scale);
  }
  __syncthreads();
  const int rows = min(kQueries, len - blk * kQueries);
  T* const dq = static_cast<T*>(p.dq) + ((first + blk * kQueries) * p.heads_q + h) * D;
  for (int x = threadIdx.x; x < rows * kChunks; x += blockDim.x) {
    const int row = x / kChunks, c = x % kChunks;
    *reinterpret_cast<uint4*>(dq + static_cast<std::int64_t>(row) * p.heads_q * D + c * 8) =
        *reinterpret_cast<const uint4*>(tile + row * kLd + c * 8);
  }
}

// kVarlen: blockIdx.z is a sequence of a packed varlen batch (its own lengths, rows at the prefix
// sums, LSE blocks [Hq, len] at Hq x its first row); a key block past its keys returns at once. A
// dense launch compiles none of it.
template <typename T, int D, bool kVarlen, int kBuffers>
__device__ __forceinline__ void key_block(const BwdParams& p, unsigned char* smem) {
  using Ti = Tiles<D>;
  constexpr int kQueries = Ti::kQueries, kKeys = Ti::kKeys, kLd = Ti::kLd, kSLd = Ti::kScoreLd;
  constexpr bool kSwz = Ti::kSwizzle;
  // Q, K, V, dO: [rows][kLd], read from column 0 (S, dP), a dK/dV warp's columns or a dQ warp's.
  using DTile = SmemOperand<T, kSwz, true>;
  using ColTile = SmemOperand<T, kSwz, true>;  // interleaved column warps: Tiles::kv_col, dq_col
  using ScoreTile = SmemOperand<T, false>;     // P, dS: [queries][kSLd]
  T* const k_s = reinterpret_cast<T*>(smem);
  T* const v_s = k_s + kKeys * kLd;
  // Buffers as base + buffer * stride (not arrays of pointers, which would live on the stack).
  T* const q_buf0 = v_s + kKeys * kLd;
  T* const do_buf0 = q_buf0 + kBuffers * kQueries * kLd;
  T* const p_s = do_buf0 + kBuffers * kQueries * kLd;
  T* const ds_s = p_s + kQueries * kSLd;
  float* const lse_buf0 = reinterpret_cast<float*>(ds_s + kQueries * kSLd);
  float* const dsum_buf0 = lse_buf0 + kBuffers * kQueries;
  int* const bounds_s = reinterpret_cast<int*>(dsum_buf0 + kBuffers * kQueries);

  const int j0 = blockIdx.x * kKeys, hk = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  // Each GEMM's warp tile origin: S and dP (queries sdp_m0.., keys sdp_n0..), dK and dV (keys kv_m0..,
  // columns kv_n0..), dQ (queries dq_m0.., columns dq_n0..).
  const int sdp_m0 = (warp % Ti::kSdpRowWarps) * Ti::kSdpM * 16,
            sdp_n0 = (warp / Ti::kSdpRowWarps) * Ti::kSdpN * 16;
  const int kv_m0 = (warp % Ti::kKvRowWarps) * Ti::kKvM * 16, kv_n0 = Ti::kv_col(warp / Ti::kKvRowWarps, 0);
  const int dq_m0 = (warp % Ti::kDqRowWarps) * Ti::kDqM * 16, dq_n0 = Ti::dq_col(warp / Ti::kDqRowWarps, 0);
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
  load_tile_pair<D, kKeys>(k_s, k_base, v_s, v_base, kv_ld, j0, seq_kv);
  ptx::cp_async_commit();

  float dk[Ti::kKvM][2 * Ti::kKvN][4] = {}, dv[Ti::kKvM][2 * Ti::kKvN][4] = {};
  const int j_last = min(j0 + kKeys, seq_kv) - 1;  // the block's last real key

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
  // from ctaid): kept live in registers beside dK and dV, they spilled (v5).
  if (threadIdx.x == 0) {
    bounds_s[0] = blk_begin;
    bounds_s[1] = blk_end;
    bounds_s[2] = full_begin;
    bounds_s[3] = full_end;
    bounds_s[4] = static_cast<int>(q_row0);  // rows < 2^31 (Problem's limits)
    bounds_s[5] = seq_q;
    bounds_s[6] = seq_kv;
    bounds_s[7] = kVarlen ? p.seq_order[b] : b;  // the sequence (its accumulator rows)
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
  // cursor (no division per step). Item n + 1 loads into the other buffer while n computes.
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
    const std::int64_t q_first = bounds_s[4], bz = ptx::ctaid_z();
    const std::int64_t head = (q_first * p.heads_q + h) * D;
    load_tile_pair<D, kQueries>(q_buf0 + buf * kQueries * kLd, static_cast<const T*>(p.q) + head,
                                do_buf0 + buf * kQueries * kLd, static_cast<const T*>(p.d_o) + head, q_ld, i0,
                                len_q());
    // LSE log2(e) in LSE's layout [B, Hq, Sq] (varlen: the sequence's [Hq, len] block at Hq x its first
    // row); the row sums as row_sums_kernel wrote them. Rows past the end read as 0 (masked below).
    const int r = threadIdx.x % kQueries;
    const bool in = i0 + r < len_q();
    if (threadIdx.x < kQueries) {
      const std::int64_t lse_at = (kVarlen ? q_first * p.heads_q + static_cast<std::int64_t>(h) * len_q()
                                           : (bz * p.heads_q + h) * len_q()) +
                                  i0 + r;
      ptx::cp_async_4(ptx::smem_addr(lse_buf0 + buf * kQueries + r), p.lse_log2 + (in ? lse_at : 0),
                      in ? 4 : 0);
    } else if (threadIdx.x < 2 * kQueries) {
      const std::int64_t sum_at =
          kVarlen ? (q_first + i0 + r) * p.heads_q + h : (bz * p.heads_q + h) * len_q() + i0 + r;
      ptx::cp_async_4(ptx::smem_addr(dsum_buf0 + buf * kQueries + r), p.row_sums + (in ? sum_at : 0),
                      in ? 4 : 0);
    }
  };
  __syncthreads();  // the bounds, before any thread reads them
  Cursor at{hk * p.group, blk_begin};
  if (at.h < h_end) issue(at, 0);
  ptx::cp_async_commit();
  const float scale_log2 = p.scale * kLog2e;
  for (int cur = 0; at.h < h_end; cur = (cur + 1) % kBuffers) {
    const int h = at.h, i0 = at.blk * kQueries;
    const bool full = at.blk >= bounds_s[2] && at.blk < bounds_s[3];
    const T* q_s = q_buf0 + cur * kQueries * kLd;
    const T* do_s = do_buf0 + cur * kQueries * kLd;
    const float* lse_s = lse_buf0 + cur * kQueries;
    const float* dsum_s = dsum_buf0 + cur * kQueries;
    // Item n landed (and K, V); the barrier also ends item n - 1's reads of P, dS and the other
    // buffer, into which item n + 1 now loads (double-buffered; single, after dK and dV below).
    ptx::cp_async_wait_all();
    __syncthreads();
    auto issue_next = [&] {
      Cursor next = at;
      step(next);
      if (next.h < h_end) issue(next, (cur + 1) % kBuffers);
      ptx::cp_async_commit();
    };
    if constexpr (kBuffers == kDoubleBuffer) issue_next();

    {
      // S [queries x keys] = Q K^T over the warp's tile; P = exp2(S scale log2e - LSE log2e), 0 where
      // masked (a row with no visible key has LSE -inf and is all masked).
      float s[Ti::kSdpM][2 * Ti::kSdpN][4] = {};
      warp_mma<Ti::kSdpM, Ti::kSdpN, D / 16, false, false>(DTile{q_s, kLd, sdp_m0, 0},
                                                           DTile{k_s, kLd, sdp_n0, 0}, lane, s);
      if (full) {
        // Every (query, key) pair of the block is visible: the common path, without a test.
        for_each_row<Ti::kSdpM, Ti::kSdpN>(s, lane, [&](int r) {
          const float lse = lse_s[sdp_m0 + r];
          return [=](int, float e) { return ptx::exp2_approx(fmaf(e, scale_log2, -lse)); };
        });
      } else {
        // Each query's visible keys as a range relative to the warp's first key, once per row, then a
        // range test per element.
        const int jw = j0 + sdp_n0;
        for_each_row<Ti::kSdpM, Ti::kSdpN>(s, lane, [&](int r) {
          const int i = i0 + sdp_m0 + r;
          int lo = 0, hi = 0;  // an empty range past the last query
          if (i < len_q()) {
            const DeviceMask m = loop_mask();
            const std::int64_t last = m.last(i), limit = len_kv();
            lo = static_cast<int>(m.first(i) - jw);
            hi = static_cast<int>((last < limit ? last : limit) - jw);
          }
          const float lse = lse_s[sdp_m0 + r];
          return [=](int c, float e) {
            return c >= lo && c < hi ? ptx::exp2_approx(fmaf(e, scale_log2, -lse)) : 0.0f;
          };
        });
      }
      store_scores<T, Ti::kSdpM, Ti::kSdpN>(p_s + sdp_m0 * kSLd + sdp_n0, kSLd, lane, s);
      // dP = dO V^T over the same tile; dS' = P (dP - D) (the softmax scale comes later, once).
      float dp[Ti::kSdpM][2 * Ti::kSdpN][4] = {};
      warp_mma<Ti::kSdpM, Ti::kSdpN, D / 16, false, false>(DTile{do_s, kLd, sdp_m0, 0},
                                                           DTile{v_s, kLd, sdp_n0, 0}, lane, dp);
      for_each_row<Ti::kSdpM, Ti::kSdpN>(dp, lane, [&](int r) {
        const float dsum = dsum_s[sdp_m0 + r];
        return [=](int, float e) { return e - dsum; };
      });
#pragma unroll
      for (int mt = 0; mt < Ti::kSdpM; ++mt)
#pragma unroll
        for (int n = 0; n < 8 * Ti::kSdpN; ++n) s[mt][n / 4][n % 4] *= dp[mt][n / 4][n % 4];
      store_scores<T, Ti::kSdpM, Ti::kSdpN>(ds_s + sdp_m0 * kSLd + sdp_n0, kSLd, lane, s);
    }
    __syncthreads();  // P and dS complete

    // dV += P^T dO and dK += dS'^T Q over the warp's [keys x columns] tile: A read transposed from P
    // and dS, B from dO and Q.
    warp_mma<Ti::kKvM, Ti::kKvN, kQueries / 16, true, true, 0, Ti::kKvColWarps>(
        ScoreTile{p_s, kSLd, 0, kv_m0}, ColTile{do_s, kLd, 0, kv_n0}, lane, dv);
    warp_mma<Ti::kKvM, Ti::kKvN, kQueries / 16, true, true, 0, Ti::kKvColWarps>(
        ScoreTile{ds_s, kSLd, 0, kv_m0}, ColTile{q_s, kLd, 0, kv_n0}, lane, dk);
    if constexpr (kBuffers == kSingleBuffer) {
      __syncthreads();  // every warp's reads of Q, dO, LSE and the row sums done: the next item loads
      issue_next();
    }
    // dQ' += dS' K over the warp's [queries x columns] tile, in chunks of columns, added to the fp32
    // accumulator in global memory: the query block's own region, in the order the atomics write
    // (dq_acc_index), so that one float4 atomic covers four lines and every atomic of a step addresses
    // one base register plus an immediate. Rows past the sequence land in the block's own padding,
    // which the conversion never reads, so no row is tested.
    const std::int64_t q_first = kVarlen ? bounds_s[4] : static_cast<std::int64_t>(ptx::ctaid_z()) * p.seq_q;
    float* const dq_tile = p.dq_acc +
                           (static_cast<std::int64_t>(h) * p.acc_rows + q_first +
                            static_cast<std::int64_t>(bounds_s[7] + at.blk) * kQueries) *
                               D +
                           dq_acc_index<D>(warp, 0, 0, 0, lane);
    auto dq_chunk = [&]<int kC0, int kN>() {
      float acc[Ti::kDqM][2 * kN][4] = {};
      warp_mma<Ti::kDqM, kN, kKeys / 16, false, true, Ti::dq_col(0, 2 * kC0), Ti::kDqColWarps>(
          ScoreTile{ds_s, kSLd, dq_m0, 0}, ColTile{k_s, kLd, 0, dq_n0}, lane, acc);
#pragma unroll
      for (int mt = 0; mt < Ti::kDqM; ++mt) {
        float* row = dq_tile + dq_acc_index<D>(0, mt, 0, 2 * kC0, 0);
#pragma unroll
        for (int nt = 0; nt < 2 * kN; ++nt) {
          const float* c = acc[mt][nt];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
          atomicAdd(reinterpret_cast<float4*>(row + nt * 128), make_float4(c[0], c[1], c[2], c[3]));
#else
          for (int e = 0; e < 4; ++e) atomicAdd(row + nt * 128 + e, c[e]);
#endif
        }
      }
    };
    constexpr int kChunk = Ti::kDqChunkN, kWhole = Ti::kDqN / kChunk, kRest = Ti::kDqN % kChunk;
    [&]<int... kI>(std::integer_sequence<int, kI...>) {
      (dq_chunk.template operator()<kI * kChunk, kChunk>(), ...);
    }
    (std::make_integer_sequence<int, kWhole>{});
    if constexpr (kRest > 0) dq_chunk.template operator()<kWhole * kChunk, kRest>();
    step(at);
  }

  // dK = dK' scale and dV of the warp's tile. The block's coordinates and key range are read again
  // (opaquely) rather than kept live across the loop, where sm_80 would spill them.
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
  for (int mt = 0; mt < Ti::kKvM; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int j = e_j0 + kv_m0 + mt * 16 + g + 8 * half;
      if (j >= e_seq_kv) continue;
#pragma unroll
      for (int nt = 0; nt < 2 * Ti::kKvN; ++nt) {
        const std::int64_t at = static_cast<std::int64_t>(j) * kv_ld + kv_n0 + Ti::kv_col(0, nt) + 2 * t;
        *reinterpret_cast<std::uint32_t*>(dk_base + at) =
            ptx::pack2<T>(dk[mt][nt][2 * half] * p.scale, dk[mt][nt][2 * half + 1] * p.scale);
        *reinterpret_cast<std::uint32_t*>(dv_base + at) =
            ptx::pack2<T>(dv[mt][nt][2 * half], dv[mt][nt][2 * half + 1]);
      }
    }
}

// A head dim whose shared memory the architecture cannot give compiles to nothing there (the host
// skips the case at prepare: fa2_mma.cu), rather than to code that spills and can never run.
template <typename T, int D, bool kVarlen, int kBuffers>
__global__ void __launch_bounds__(kThreads, ctas_per_sm<D, kVarlen>()) key_block_kernel(BwdParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  if constexpr (smem_bytes<D, kBuffers>() <= smem::kArchOptin) key_block<T, D, kVarlen, kBuffers>(p, smem);
}

template <typename T, int D, bool kVarlen, int kBuffers>
void launch_key_blocks(const Problem& pr, const BwdParams& prm, cudaStream_t stream) {
  constexpr std::size_t kSmem = smem_bytes<D, kBuffers>();
  constexpr int kKeys = Tiles<D>::kKeys;
  static const bool attr = [] {
    ATTN_CUDA_CHECK(cudaFuncSetAttribute(key_block_kernel<T, D, kVarlen, kBuffers>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(kSmem)));
    return true;
  }();
  (void)attr;
  // A varlen batch: seq_kv is the longest sequence's; shorter ones return from their extra blocks.
  const dim3 grid(static_cast<unsigned>((pr.seq_kv + kKeys - 1) / kKeys), static_cast<unsigned>(pr.heads_kv),
                  static_cast<unsigned>(pr.batch));
  key_block_kernel<T, D, kVarlen, kBuffers><<<grid, kThreads, kSmem, stream>>>(prm);
  ATTN_CUDA_CHECK_LAUNCH("fa2.mma backward key_block_kernel");
}

// buffers: kDoubleBuffer, or kSingleBuffer where lean_compiled<D>() (the host's choice: fa2_backward.cu).
template <typename T, int D>
void launch(const Problem& pr, const BwdParams& prm, int buffers, cudaStream_t stream) {
  ATTN_CUDA_CHECK(
      cudaMemsetAsync(prm.dq_acc, 0, static_cast<std::size_t>(pr.heads_q * prm.acc_rows * D) * 4, stream));
  const std::int64_t rows = prm.total_q * pr.heads_q;
  constexpr int kRowsPerBlock = row_sum_rows_per_block<D>(256);
  row_sums_kernel<T, D>
      <<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), 256, 0, stream>>>(prm);
  ATTN_CUDA_CHECK_LAUNCH("fa2.mma backward row_sums_kernel");
  auto key_blocks = [&]<int kBuffers>() {
    if (prm.cu_q != nullptr)
      launch_key_blocks<T, D, true, kBuffers>(pr, prm, stream);
    else
      launch_key_blocks<T, D, false, kBuffers>(pr, prm, stream);
  };
  if constexpr (lean_compiled<D>()) {
    if (buffers == kSingleBuffer) {
      key_blocks.template operator()<kSingleBuffer>();
    } else {
      key_blocks.template operator()<kDoubleBuffer>();
    }
  } else {
    key_blocks.template operator()<kDoubleBuffer>();
  }
  const dim3 blocks(static_cast<unsigned>((pr.seq_q + Tiles<D>::kQueries - 1) / Tiles<D>::kQueries),
                    static_cast<unsigned>(pr.heads_q), static_cast<unsigned>(pr.batch));
  dq_convert_kernel<T, D><<<blocks, 256, 0, stream>>>(prm);
  ATTN_CUDA_CHECK_LAUNCH("fa2.mma backward dq_convert_kernel");
}

}  // namespace attn::fa2::bwd
