// fa2.mma's backward: FlashAttention-2's backward (Dao 2023, algorithm 2) on mma.sync m16n8k16.
// One CTA of 8 warps per (key block of 128, KV head, batch); it loops over the query heads of its KV
// group and the query blocks of 64 that see the key block, so dK and dV stay in registers and need
// no atomics. Per query block, warp w owns keys 16w..16w+15:
//   S^T = K_w Q^T, P^T = exp2(S^T scale log2e - LSE log2e) (masked: 0), dV_w += P^T dO,
//   dP^T = V_w dO^T, dS'^T = P^T (dP^T - D), dK_w += dS'^T Q,
// then dS'^T goes to shared memory and warp w takes queries 16(w%4).. and half w/4 of D's columns
// of dQ' += dS' K, added to an fp32 accumulator in global memory with atomics. The softmax scale
// is applied once, to dK at the end and to dQ in the conversion (dS = dS' scale). A pre-pass forms
// D = rowsum(dO * O) and zeroes the accumulator; a post-pass converts it to the dtype. Operands are
// staged in shared memory rows padded by 16 bytes (ldmatrix without bank conflicts); the next query
// block's Q, dO, LSE and D load (cp.async) while this one computes.
//
// Why 128 keys and 8 warps (v4; v3 had 64 and 4): every query block's Q, dO and dQ atomics serve
// twice the keys, and ncu counted v3's instructions at 2.15x FlashAttention-2's for the same work.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/cuda_check.hpp"
#include "kernels/common/mma_ptx.cuh"
#include "kernels/fa2/fa2_backward.hpp"
#include "kernels/reference/device_mask.hpp"
#include "kernels/reference/device_types.cuh"

namespace attn::fa2 {

namespace {

constexpr int kKeys = 128;    // keys per CTA
constexpr int kQueries = 64;  // queries per step
constexpr int kWarps = kKeys / 16;
constexpr int kThreads = kWarps * 32;
constexpr float kLog2e = 1.4426950408889634f;

struct BwdParams {
  const void *q, *k, *v, *o, *d_o;
  const float* lse;
  void *dq, *dk, *dv;
  float* dq_acc;    // [B, Sq, Hq, D] fp32
  float* row_sums;  // [B, Hq, Sq]; a varlen batch: [total_q, Hq]
  DeviceMask mask;
  int batch, heads_q, heads_kv, group, seq_q, seq_kv;  // varlen: seq_q and seq_kv the longest
  float scale;
  // A varlen batch's prefix sums (Fa2Params::cu_q, cu_kv); null for a dense one.
  const int* cu_q;
  const int* cu_kv;
  const int* seq_order;  // grid.z -> sequence, longest first (Fa2Params::seq_order)
  std::int64_t total_q;  // query rows over the batch
};

template <int D>
constexpr int row_elems() {
  return D + 8;  // 16 bytes of padding per row
}

template <int D>
constexpr std::size_t smem_bytes() {
  // K and V [128][D + 8], two Q and two dO tiles [64][D + 8] (the next query block loads during this
  // one), dS'^T [128][64 + 8] in 16-bit elements; two LSE and two D rows [64] fp32.
  return (2 * kKeys * row_elems<D>() + 4 * kQueries * row_elems<D>() + kKeys * (kQueries + 8)) * 2 +
         4 * kQueries * sizeof(float);
}

// acc [16 x 16 kNp] = A_w B^T: the warp's 16 rows of `a_tile` (K or V) against 16 kNp rows of
// `b_tile` (Q or dO), both with rows of D + 8 elements in shared memory: S^T = K_w Q^T and
// dP^T = V_w dO^T. `a_lane` and `b_lane` are the lane's ldmatrix offsets [elements] into the tiles
// (A row-major, B stored [n][k]).
template <int D, int kNp, typename T>
__device__ __forceinline__ void warp_gemm_abt(const T* a_tile, const T* b_tile, int a_lane, int b_lane,
                                              float (&acc)[2 * kNp][4]) {
  constexpr int kLd = row_elems<D>();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t a[4];
    ptx::ldmatrix_x4(ptx::smem_addr(a_tile + a_lane + kk * 16), a);
#pragma unroll
    for (int np = 0; np < kNp; ++np) {
      std::uint32_t b[4];
      ptx::ldmatrix_x4(ptx::smem_addr(b_tile + np * 16 * kLd + b_lane + kk * 16), b);
      ptx::mma_16816<T>(acc[2 * np], a, b[0], b[1]);
      ptx::mma_16816<T>(acc[2 * np + 1], a, b[2], b[3]);
    }
  }
}

// Rows [row0, row0 + kRows) of a BSHD tensor (row stride `ld` elements) into a padded tile; rows
// past `rows` are zero. 16-byte cp.async chunks.
template <int D, int kRows, typename T>
__device__ __forceinline__ void load_tile(T* tile, const T* base, std::int64_t ld, int row0, int rows) {
  constexpr int kChunks = D / 8;
  static_assert(kRows * kChunks % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int k = 0; k < kRows * kChunks / kThreads; ++k) {
    const int idx = static_cast<int>(threadIdx.x) + k * kThreads;
    const int r = idx / kChunks, c = idx % kChunks;
    const bool in = row0 + r < rows;
    const T* src = base + (in ? static_cast<std::int64_t>(row0 + r) * ld + c * 8 : 0);
    ptx::cp_async_16(ptx::smem_addr(tile + r * row_elems<D>() + c * 8), src, in ? 16 : 0);
  }
}

// dsum[b, h, i] = sum_d dO * O, and the dQ accumulator zeroed; one warp per query row. A varlen
// batch's row sums are token-major, [total_q, Hq], the layout of its rows (no search for the
// sequence of a row).
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
  if (lane == 0) p.row_sums[row] = s;
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
__global__ void __launch_bounds__(kThreads) key_block_kernel(BwdParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int kLd = row_elems<D>(), kDsLd = kQueries + 8;
  T* k_s = reinterpret_cast<T*>(smem);
  T* v_s = k_s + kKeys * kLd;
  // Double buffers as base + buffer * stride (not arrays of pointers, which would live on the stack).
  T* const q_buf0 = v_s + kKeys * kLd;
  T* const do_buf0 = q_buf0 + 2 * kQueries * kLd;
  T* ds_s = do_buf0 + 2 * kQueries * kLd;
  float* const lse_buf0 = reinterpret_cast<float*>(ds_s + kKeys * kDsLd);
  float* const dsum_buf0 = lse_buf0 + 2 * kQueries;

  const int j0 = blockIdx.x * kKeys, hk = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
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

  float dk[D / 8][4] = {}, dv[D / 8][4] = {};
  const int j_last = min(j0 + kKeys, seq_kv) - 1;  // the block's last real key
  // ldmatrix lane addresses (see the m16n8k16 fragment layouts): A row-major, B stored [n][k]
  // (non-transposed load), B stored [k][n] and A stored [k][m] (transposed loads).
  const int a_row = lane % 16, a_col = (lane / 16) * 8;
  const int bn_row = (lane % 8) + 8 * (lane / 16), bn_col = 8 * ((lane / 8) % 2);
  const int bt_row = (lane % 8) + 8 * ((lane / 8) % 2), bt_col = 8 * (lane / 16);
  const int at_row = (lane % 8) + 8 * (lane / 16), at_col = 8 * ((lane / 8) % 2);
  const int a_lane = (warp * 16 + a_row) * kLd + a_col, b_lane = bn_row * kLd + bn_col;
  // dQ's warp tile: queries dq_row0.. (16), columns dq_col0.. (D / 2).
  constexpr int kDqCols = D / 2;
  const int dq_row0 = (warp % 4) * 16, dq_col0 = (warp / 4) * kDqCols;

  // The work items, in order: (query head of the group, query block) pairs that see this key block
  // (the visible ranges grow with i). The next item's Q, dO, LSE and D load while this one computes.
  auto advance = [&](int& h, int& i0) {
    for (;;) {
      i0 += kQueries;
      if (i0 >= seq_q) {
        i0 = 0;
        if (++h >= (hk + 1) * p.group) return false;
      }
      const int i_last = min(i0 + kQueries, seq_q) - 1;
      if (mask.last(i_last) > j0 && mask.first(i0) <= j_last) return true;
    }
  };
  auto issue = [&](int h, int i0, int buf) {
    const std::int64_t head = (q_row0 * p.heads_q + h) * D;
    load_tile<D, kQueries>(q_buf0 + buf * kQueries * kLd, static_cast<const T*>(p.q) + head, q_ld, i0, seq_q);
    load_tile<D, kQueries>(do_buf0 + buf * kQueries * kLd, static_cast<const T*>(p.d_o) + head, q_ld, i0,
                           seq_q);
    // LSE [B, Hq, Sq] (varlen: the sequence's [Hq, len] block at Hq x its first row); the row sums
    // as row_sums_kernel wrote them. Rows past the end read as 0 (masked below).
    const int r = threadIdx.x % kQueries;
    const bool in = i0 + r < seq_q;
    if (threadIdx.x < kQueries) {
      const std::int64_t lse_at = (kVarlen ? q_row0 * p.heads_q + static_cast<std::int64_t>(h) * seq_q
                                           : (static_cast<std::int64_t>(b) * p.heads_q + h) * seq_q) +
                                  i0 + r;
      ptx::cp_async_4(ptx::smem_addr(lse_buf0 + buf * kQueries + r), p.lse + (in ? lse_at : 0), in ? 4 : 0);
    } else if (threadIdx.x < 2 * kQueries) {
      const std::int64_t sum_at = kVarlen ? (q_row0 + i0 + r) * p.heads_q + h
                                          : (static_cast<std::int64_t>(b) * p.heads_q + h) * seq_q + i0 + r;
      ptx::cp_async_4(ptx::smem_addr(dsum_buf0 + buf * kQueries + r), p.row_sums + (in ? sum_at : 0),
                      in ? 4 : 0);
    }
  };
  int h = hk * p.group, i0 = -kQueries;
  bool have = advance(h, i0);
  if (have) issue(h, i0, 0);
  ptx::cp_async_commit();
  const float scale_log2 = p.scale * kLog2e;
  for (int n = 0; have; ++n) {
    const int cur = n & 1;
    int h_next = h, i_next = i0;
    const bool more = advance(h_next, i_next);
    __syncthreads();  // the previous item's readers of the other buffers and of dS'^T are done
    if (more) issue(h_next, i_next, cur ^ 1);
    ptx::cp_async_commit();
    const T* q_s = q_buf0 + cur * kQueries * kLd;
    const T* do_s = do_buf0 + cur * kQueries * kLd;
    const float* lse_s = lse_buf0 + cur * kQueries;
    const float* dsum_s = dsum_buf0 + cur * kQueries;
    const int i_last = min(i0 + kQueries, seq_q) - 1;
    ptx::cp_async_wait_group<1>();  // this item's loads (and K, V) landed; the next may be in flight
    __syncthreads();

    {
      // S^T [16 keys x 64 queries] = K_w Q^T.
      float s[8][4] = {};
      warp_gemm_abt<D, 4>(k_s, q_s, a_lane, b_lane, s);
      // P^T, 0 where masked (a row with no visible key has LSE -inf and is all masked). A block whose
      // every (query, key) pair is visible takes the path without the per-element test (visibility
      // is monotone in i); it is the common one, so it is its own code, not a predicate.
      const bool full = i0 + kQueries <= seq_q && j0 + kKeys <= seq_kv && mask.first(i_last) <= j0 &&
                        mask.last(i0) > j_last;
      if (full) {
#pragma unroll
        for (int nt = 0; nt < 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int c = nt * 8 + 2 * t + (e % 2);
            s[nt][e] = ptx::exp2_approx(fmaf(s[nt][e], scale_log2, -lse_s[c] * kLog2e));
          }
      } else {
#pragma unroll
        for (int nt = 0; nt < 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = g + 8 * (e / 2), c = nt * 8 + 2 * t + (e % 2);
            const bool on =
                i0 + c < seq_q && j0 + warp * 16 + r < seq_kv && mask.visible(i0 + c, j0 + warp * 16 + r);
            s[nt][e] = on ? ptx::exp2_approx(fmaf(s[nt][e], scale_log2, -lse_s[c] * kLog2e)) : 0.0f;
          }
      }
      // dV_w [16 x D] += P^T [16 x 64] dO [64 x D].
#pragma unroll
      for (int kc = 0; kc < 4; ++kc) {
        const std::uint32_t a[4] = {ptx::pack2<T>(s[2 * kc][0], s[2 * kc][1]),
                                    ptx::pack2<T>(s[2 * kc][2], s[2 * kc][3]),
                                    ptx::pack2<T>(s[2 * kc + 1][0], s[2 * kc + 1][1]),
                                    ptx::pack2<T>(s[2 * kc + 1][2], s[2 * kc + 1][3])};
#pragma unroll
        for (int np = 0; np < D / 16; ++np) {
          std::uint32_t bd[4];
          ptx::ldmatrix_x4_trans(ptx::smem_addr(do_s + (kc * 16 + bt_row) * kLd + np * 16 + bt_col), bd);
          ptx::mma_16816<T>(dv[2 * np], a, bd[0], bd[1]);
          ptx::mma_16816<T>(dv[2 * np + 1], a, bd[2], bd[3]);
        }
      }
      // dP^T [16 x 64] = V_w dO^T, then dS'^T = P^T (dP^T - D) in place of P^T; in two halves of
      // 32 queries, so that P^T, dP^T, dK and dV together fit the registers at D 128 (sm_80 spilled).
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float dp[4][4] = {};
        warp_gemm_abt<D, 2>(v_s, do_s + half * 32 * kLd, a_lane, b_lane, dp);
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int c = half * 32 + nt * 8 + 2 * t + (e % 2);
            s[half * 4 + nt][e] *= dp[nt][e] - dsum_s[c];
          }
      }
      // dK_w [16 x D] += dS'^T [16 x 64] Q [64 x D]; dS'^T to shared memory for dQ.
#pragma unroll
      for (int kc = 0; kc < 4; ++kc) {
        const std::uint32_t a[4] = {ptx::pack2<T>(s[2 * kc][0], s[2 * kc][1]),
                                    ptx::pack2<T>(s[2 * kc][2], s[2 * kc][3]),
                                    ptx::pack2<T>(s[2 * kc + 1][0], s[2 * kc + 1][1]),
                                    ptx::pack2<T>(s[2 * kc + 1][2], s[2 * kc + 1][3])};
        std::uint32_t* row_g =
            reinterpret_cast<std::uint32_t*>(ds_s + (warp * 16 + g) * kDsLd + kc * 16 + 2 * t);
        std::uint32_t* row_g8 =
            reinterpret_cast<std::uint32_t*>(ds_s + (warp * 16 + g + 8) * kDsLd + kc * 16 + 2 * t);
        row_g[0] = a[0];
        row_g8[0] = a[1];
        row_g[4] = a[2];  // 8 elements further: the second n-tile of this k chunk
        row_g8[4] = a[3];
#pragma unroll
        for (int np = 0; np < D / 16; ++np) {
          std::uint32_t bq[4];
          ptx::ldmatrix_x4_trans(ptx::smem_addr(q_s + (kc * 16 + bt_row) * kLd + np * 16 + bt_col), bq);
          ptx::mma_16816<T>(dk[2 * np], a, bq[0], bq[1]);
          ptx::mma_16816<T>(dk[2 * np + 1], a, bq[2], bq[3]);
        }
      }
    }
    __syncthreads();  // dS'^T complete

    {
      // dQ' [16 queries x D / 2] += dS' [16 x 128 keys] K [128 x D / 2].
      float acc[kDqCols / 8][4] = {};
#pragma unroll
      for (int kc = 0; kc < kKeys / 16; ++kc) {
        std::uint32_t a[4];
        ptx::ldmatrix_x4_trans(ptx::smem_addr(ds_s + (kc * 16 + at_row) * kDsLd + dq_row0 + at_col), a);
#pragma unroll
        for (int np = 0; np < kDqCols / 16; ++np) {
          std::uint32_t bk[4];
          ptx::ldmatrix_x4_trans(
              ptx::smem_addr(k_s + (kc * 16 + bt_row) * kLd + dq_col0 + np * 16 + bt_col), bk);
          ptx::mma_16816<T>(acc[2 * np], a, bk[0], bk[1]);
          ptx::mma_16816<T>(acc[2 * np + 1], a, bk[2], bk[3]);
        }
      }
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int i = i0 + dq_row0 + g + 8 * half;
        if (i >= seq_q) continue;
        float* row = p.dq_acc + ((q_row0 + i) * p.heads_q + h) * D + dq_col0 + 2 * t;
#pragma unroll
        for (int nt = 0; nt < kDqCols / 8; ++nt) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
          atomicAdd(reinterpret_cast<float2*>(row + nt * 8),
                    make_float2(acc[nt][2 * half], acc[nt][2 * half + 1]));
#else
          atomicAdd(row + nt * 8, acc[nt][2 * half]);
          atomicAdd(row + nt * 8 + 1, acc[nt][2 * half + 1]);
#endif
        }
      }
    }
    h = h_next;
    i0 = i_next;
    have = more;
  }

  // dK = dK' scale and dV of the warp's 16 keys. The block's coordinates and key range are read
  // again (opaquely) rather than kept live across the loop, where sm_80 would spill them.
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
  for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int j = e_j0 + warp * 16 + g + 8 * half;
      if (j >= e_seq_kv) continue;
      const int d = nt * 8 + 2 * t;
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
  static const bool attr = [] {
    ATTN_CUDA_CHECK(cudaFuncSetAttribute(key_block_kernel<T, D, kVarlen>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(kSmem)));
    return true;
  }();
  (void)attr;
  // A varlen batch: seq_kv is the longest sequence's; shorter ones return from their extra blocks.
  const dim3 grid(static_cast<unsigned>((pr.seq_kv + kKeys - 1) / kKeys),
                  static_cast<unsigned>(pr.heads_kv), static_cast<unsigned>(pr.batch));
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

}  // namespace

std::string backward_why_not(const Problem& p) {
  if (p.head_dim != 32 && p.head_dim != 64 && p.head_dim != 96 && p.head_dim != 128)
    return "head_dim = " + std::to_string(p.head_dim) +
           ": fa2.mma's backward is compiled for 32, 64, 96 and 128 (from 160 on, a warp's dK and dV rows in "
           "registers spill: D fp32 accumulators a thread)";
  return {};
}

std::size_t backward_workspace_bytes(const Problem& p) {
  const auto acc = static_cast<std::size_t>(p.q_elems()) * sizeof(float);
  return (acc + 255) / 256 * 256 + static_cast<std::size_t>(p.lse_elems()) * sizeof(float);
}

void run_backward(const Problem& pr, const BackwardArgs& a, const int* cu_q, const int* cu_kv,
                  const int* seq_order) {
  if (a.workspace_bytes < backward_workspace_bytes(pr))
    throw KernelError("fa2.mma backward: workspace too small");
  if (pr.varlen.active() != (cu_q != nullptr && cu_kv != nullptr && seq_order != nullptr))
    throw KernelError("fa2.mma backward: a varlen batch needs its prefix sums, a dense one none");
  for (const void* ptr : {a.q, a.k, a.v, a.d_o})
    if (ptr == nullptr || reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0)
      throw KernelError("fa2.mma backward: Q, K, V and dO must be non-null and 16-byte aligned (cp.async)");
  BwdParams prm{};
  prm.q = a.q, prm.k = a.k, prm.v = a.v, prm.o = a.o, prm.d_o = a.d_o, prm.lse = a.lse;
  prm.dq = a.dq, prm.dk = a.dk, prm.dv = a.dv;
  auto* ws = static_cast<char*>(a.workspace);
  prm.dq_acc = reinterpret_cast<float*>(ws);
  prm.row_sums = reinterpret_cast<float*>(
      ws + (static_cast<std::size_t>(pr.q_elems()) * sizeof(float) + 255) / 256 * 256);
  prm.mask = make_device_mask(pr);
  prm.batch = static_cast<int>(pr.batch), prm.heads_q = static_cast<int>(pr.heads_q);
  prm.heads_kv = static_cast<int>(pr.heads_kv), prm.group = static_cast<int>(pr.heads_q / pr.heads_kv);
  prm.seq_q = static_cast<int>(pr.seq_q), prm.seq_kv = static_cast<int>(pr.seq_kv);
  prm.scale = a.scale;
  prm.cu_q = cu_q;
  prm.cu_kv = cu_kv;
  prm.seq_order = seq_order;
  prm.total_q = pr.total_q();
  auto stream = static_cast<cudaStream_t>(a.stream);
  const bool half = pr.dtype == DType::fp16;
  switch (pr.head_dim) {
    case 32:
      return half ? launch<__half, 32>(pr, prm, stream) : launch<__nv_bfloat16, 32>(pr, prm, stream);
    case 64:
      return half ? launch<__half, 64>(pr, prm, stream) : launch<__nv_bfloat16, 64>(pr, prm, stream);
    case 96:
      return half ? launch<__half, 96>(pr, prm, stream) : launch<__nv_bfloat16, 96>(pr, prm, stream);
    case 128:
      return half ? launch<__half, 128>(pr, prm, stream) : launch<__nv_bfloat16, 128>(pr, prm, stream);
    default:
      throw KernelError("fa2.mma backward: head_dim " + std::to_string(pr.head_dim) + " is not compiled");
  }
}

}  // namespace attn::fa2
