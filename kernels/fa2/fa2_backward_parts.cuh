// fa2.mma's backward, its parts (fa2_backward_kernel.cuh puts them together): the parameters, the
// shape of a CTA's work per head dim (keys, queries a step, the D split, buffers, shared memory) and
// the warp-level building blocks (tile loads, the warp GEMMs, the warp pairs' exchange).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/mma_ptx.cuh"
#include "kernels/reference/device_mask.hpp"

namespace attn::fa2::bwd {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
// Above D 128 a warp's dK and dV rows (16 keys x D, fp32) no longer fit its registers: warp pairs
// then share 16 keys and split D, each forming S^T and dP^T over its half of D and adding its
// partner's half through shared memory (pair_sum), so a CTA holds 64 keys.
template <int D>
constexpr int d_split() {
  return D > 128 ? 2 : 1;
}
template <int D>
constexpr int keys_per_cta() {
  return 16 * kWarps / d_split<D>();
}
// Q/dO buffers: two (the next-but-one block loads during this one) where shared memory allows,
// one above D 128 (the next block loads during dQ).
template <int D>
constexpr int q_buffers() {
  return d_split<D>() == 2 ? 1 : 2;
}
// Queries per step: 128 at D 64 (FlashAttention-2's choice there; half the steps, larger warp tiles
// in the registers D 64 leaves: +4-8% on the H100); 32 at D 256, where a warp's dK and dV halves
// (128 registers), P^T and dP^T of 64 queries and the pair exchange spilled; else 64 (D 32 lost
// 15-30% with 128).
template <int D>
constexpr int queries_per_step() {
  return D == 64 ? 128 : (D > 224 ? 32 : 64);
}
constexpr float kLog2e = 1.4426950408889634f;

struct BwdParams {
  const void *q, *k, *v, *o, *d_o;
  const float* lse;
  void *dq, *dk, *dv;
  float* dq_acc;    // [B, Sq, Hq, D] fp32
  float* row_sums;  // [B, Hq, Sq]; a varlen batch: [total_q, Hq]
  float* lse_log2;  // LSE log2(e), in LSE's layout (the exponent of P is one FMA)
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

// CTAs an SM holds: two for a dense batch at D 32 on sm_90, whose 128 registers a thread allow it
// (the compiler took 130 when not told: one CTA an SM, 20% lost on the H100); one elsewhere: a
// varlen batch's sequence state, and sm_80/89's code, spill at 128, and above D 32 dK and dV alone
// take D / 2 registers.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr bool kTwoCtasAtD32 = false;
#else
constexpr bool kTwoCtasAtD32 = true;
#endif
template <int D, bool kVarlen>
constexpr int ctas_per_sm() {
  return D <= 32 && !kVarlen && kTwoCtasAtD32 ? 2 : 1;
}

template <int D>
constexpr std::size_t smem_bytes() {
  constexpr int kQueries = queries_per_step<D>(), kKeys = keys_per_cta<D>(), kBuf = q_buffers<D>();
  // K and V [kKeys][D + 8], kBuf Q and dO tiles [kQueries][D + 8], dS'^T [kKeys][kQueries + 8] in
  // 16-bit elements; kBuf LSE and D rows [kQueries] fp32; the query-block bounds and the sequence's
  // first query row and lengths (8 ints); with a D split, the pairs' S^T and dP^T exchange buffers.
  constexpr std::size_t exchange = d_split<D>() == 2 ? 2 * kWarps * 32 * (kQueries / 8) * sizeof(float4) : 0;
  return (2 * kKeys * row_elems<D>() + 2 * kBuf * kQueries * row_elems<D>() + kKeys * (kQueries + 8)) * 2 +
         2 * kBuf * kQueries * sizeof(float) + 8 * sizeof(int) + exchange;
}

// acc [16 x 16 kNp] = A_w B^T over kK columns: the warp's 16 rows of `a_tile` (K or V) against 16 kNp
// rows of `b_tile` (Q or dO), both with rows of D + 8 elements in shared memory: S^T = K_w Q^T and
// dP^T = V_w dO^T. `a_lane` and `b_lane` are the lane's ldmatrix offsets [elements] into the tiles
// (A row-major, B stored [n][k]), including the warp's first column.
template <int D, int kK, int kNp, typename T>
__device__ __forceinline__ void warp_gemm_abt(const T* a_tile, const T* b_tile, int a_lane, int b_lane,
                                              float (&acc)[2 * kNp][4]) {
  constexpr int kLd = row_elems<D>();
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk) {
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

// The A fragment (m16n8k16) of k chunk kc (16 queries) of the warp's [16 x queries] fp32 scores,
// packed to T: P^T for dV, dS'^T for dK and dQ.
template <typename T, int kTiles>
__device__ __forceinline__ void pack_a(const float (&s)[kTiles][4], int kc, std::uint32_t (&a)[4]) {
  a[0] = ptx::pack2<T>(s[2 * kc][0], s[2 * kc][1]);
  a[1] = ptx::pack2<T>(s[2 * kc][2], s[2 * kc][3]);
  a[2] = ptx::pack2<T>(s[2 * kc + 1][0], s[2 * kc + 1][1]);
  a[3] = ptx::pack2<T>(s[2 * kc + 1][2], s[2 * kc + 1][3]);
}

// acc [16 x kCols] += A [16 x 16] B [16 x kCols]: A in registers, B rows row0.. and columns col0.. of
// `b_tile` (rows of D + 8 elements), read by transposed ldmatrix at the lane's row and column
// (bt_row, bt_col). One k chunk of dV_w += P^T dO or dK_w += dS'^T Q.
template <int D, int kCols, typename T>
__device__ __forceinline__ void warp_gemm_a_regs(const std::uint32_t (&a)[4], const T* b_tile, int row0,
                                                 int col0, int bt_row, int bt_col,
                                                 float (&acc)[kCols / 8][4]) {
  constexpr int kLd = row_elems<D>();
#pragma unroll
  for (int np = 0; np < kCols / 16; ++np) {
    std::uint32_t b[4];
    ptx::ldmatrix_x4_trans(ptx::smem_addr(b_tile + (row0 + bt_row) * kLd + col0 + np * 16 + bt_col), b);
    ptx::mma_16816<T>(acc[2 * np], a, b[0], b[1]);
    ptx::mma_16816<T>(acc[2 * np + 1], a, b[2], b[3]);
  }
}

// acc += the partner warp's acc (same fragment layout), through `xbuf` [kTiles][kWarps][32] float4,
// lane-contiguous so that neither side's accesses conflict. The pair meets at named barrier `bar`
// (64 threads); the caller keeps `xbuf` untouched until a CTA-wide barrier has passed.
template <int kTiles>
__device__ __forceinline__ void pair_sum(float (&acc)[kTiles][4], float4* xbuf, int warp, int partner,
                                         int lane, int bar) {
#pragma unroll
  for (int j = 0; j < kTiles; ++j)
    xbuf[(j * kWarps + warp) * 32 + lane] = make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]);
  asm volatile("bar.sync %0, 64;\n" ::"r"(bar) : "memory");
#pragma unroll
  for (int j = 0; j < kTiles; ++j) {
    const float4 o = xbuf[(j * kWarps + partner) * 32 + lane];
    acc[j][0] += o.x;
    acc[j][1] += o.y;
    acc[j][2] += o.z;
    acc[j][3] += o.w;
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

}  // namespace attn::fa2::bwd
