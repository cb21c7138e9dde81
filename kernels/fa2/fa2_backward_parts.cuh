// fa2.mma's backward, its parts (fa2_backward_kernel.cuh puts them together): the parameters, the
// shape of a CTA's work per head dim (keys, queries a step, each GEMM's warp grid, shared memory) and
// the warp-level building blocks (tile loads, the warp GEMM over shared-memory operands).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/mma_ptx.cuh"
#include "kernels/common/smem_optin.hpp"
#include "kernels/reference/device_mask.hpp"

namespace attn::fa2::bwd {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr float kLog2e = 1.4426950408889634f;
// Q/dO buffers (the kernels' kBuffers): 2, the next query block loading while one computes (three,
// the next two loading, were level or up to 3% slower at D <= 128: the loads are not what the warps
// wait for); 1, the lean tiles, the next block loading once dK and dV have read this one (under dQ's
// GEMM only), which an sm_80 GPU's 163 KiB hold at every D (lean_compiled).
constexpr int kDoubleBuffer = 2, kSingleBuffer = 1;

// A CTA's work at head dim D: kKeys keys (its dK and dV stay in registers over the whole loop), kQueries
// queries a step, and for each of the step's GEMMs how the 8 warps split its output: `*RowWarps`
// warps along the rows, the rest along the columns. Every warp tile is a whole number of 16 x 16
// blocks. The grids are FlashAttention-2's where it has one (D 64: 128 x 128 with S and dP over 4 x 2
// warps; D 128: 64 x 128, 2 x 4, dK/dV 4 x 2, dQ 2 x 4; D 256: 64 x 64, 4 x 2, 2 x 4, dQ 2 x 4: 255
// registers, no spill, 3-4% faster than 4 x 2 at S 8192, docs/PERF.md): 2-D warp
// tiles read each operand row by fewer warps than the v6 kernel's 16-key rows did, whose shared-memory
// pipe was the bottleneck (docs/PERF.md, "fa2.mma backward v7"). D 32 keeps two CTAs an SM (128
// registers): S over 4 x 2 warps, since 2 x 4 spilled there, and 128 queries a step with one CTA an
// SM measured 11-13% slower.
template <int D>
struct Tiles {
  static constexpr int kKeys = D <= 128 ? 128 : 64;
  static constexpr int kQueries = D == 64 ? 128 : 64;
  static constexpr int kSdpRowWarps = D == 32 || D == 64 || D > 128 ? 4 : 2;        // S, dP: queries x keys
  static constexpr int kKvRowWarps = D == 32 ? 8 : (D <= 160 || D == 224) ? 4 : 2;  // dK, dV: keys x D
  static constexpr int kDqRowWarps = D == 128 || D == 192 || D == 256 ? 2 : 4;      // dQ: queries x D
  // Q, K, V, dO rows in shared memory. D a multiple of 64 (whole 128-byte lines a row): unpadded, the
  // 16-byte chunks of each line XOR-swizzled by row % 8 (the forward's layout, fa2_traits.hpp), so a
  // warp's cp.async of a global line fills one shared line; padded by 16 bytes, each line's copy split
  // over two shared lines (ncu at D 192: 2.7 wavefronts for each ideal one on those loads, 26% more bank
  // conflicts than FA2). Either way ldmatrix's 8 rows hit distinct banks. Measured +3-5% at D 128,
  // +2-3% at D 192 and +6% at D 256 (its key-block kernel, ncu; with chunk_addr's aligned form, without
  // which D 256's addresses spilled); D 64 not timed against padded (docs/PERF.md).
  static constexpr bool kSwizzle = D % 64 == 0;
  static constexpr int kLd = kSwizzle ? D : D + 8;
  static constexpr int kScoreLd = kKeys + 8;  // P and dS rows
  // Warp tiles, in 16 x 16 blocks (m tiles, n pairs).
  static constexpr int kSdpM = kQueries / kSdpRowWarps / 16, kSdpN = kKeys / (kWarps / kSdpRowWarps) / 16;
  static constexpr int kKvM = kKeys / kKvRowWarps / 16, kKvN = D / (kWarps / kKvRowWarps) / 16;
  static constexpr int kDqM = kQueries / kDqRowWarps / 16, kDqN = D / (kWarps / kDqRowWarps) / 16;
  // dQ's columns in chunks of at most 32 accumulators a thread (the chunk sits beside dK and dV; 64
  // spilled the varlen kernel at D 256, 56 at D 224), the last one what is left.
  static constexpr int kDqChunkN = 4 / kDqM < kDqN ? 4 / kDqM : kDqN;
  // The dK/dV and dQ grids' column warps own interleaved 16-column blocks: n-pair np of column warp wc
  // is block np kColWarps + wc (not wc kN + np). A warp's first chunk is then below 8 and its n-pairs
  // 2 kColWarps chunks apart, bits the swizzle's XOR and the lane's chunk do not share, so every
  // n-pair's address is one base plus an immediate (chunk_addr's aligned form) at every D; contiguous,
  // 48-column warp tiles (D 192's) or 32-column ones (D 64, D 128's dQ) XORed each n-pair apart.
  // Measured +2-3% at D 192, +1% at D 64, level at D 128 (docs/PERF.md).
  static constexpr int kKvColWarps = kWarps / kKvRowWarps, kDqColWarps = kWarps / kDqRowWarps;
  static_assert((kKvColWarps & (kKvColWarps - 1)) == 0 && (kDqColWarps & (kDqColWarps - 1)) == 0,
                "column warps a power of two: their chunk bits and the n-pair steps stay disjoint");
  // The first column of n-pair np (8-column tile nt = 2 np + half) of column warp wc of `col_warps`.
  static constexpr int interleaved_col(int col_warps, int wc, int nt) {
    return ((nt / 2) * col_warps + wc) * 16 + (nt % 2) * 8;
  }
  static constexpr int kv_col(int wc, int nt) { return interleaved_col(kKvColWarps, wc, nt); }
  static constexpr int dq_col(int wc, int nt) { return interleaved_col(kDqColWarps, wc, nt); }
  static_assert(kSdpM >= 1 && kSdpN >= 1 && kKvM >= 1 && kKvN >= 1 && kDqM >= 1 && kDqN >= 1);
  static_assert(kSdpM * kSdpN * 256 * kWarps == kQueries * kKeys, "S and dP: the warps tile the step");
  static_assert(kKvM * kKvN * 256 * kWarps == kKeys * D, "dK and dV: the warps tile the key block");
  static_assert(kDqM * kDqN * 256 * kWarps == kQueries * D, "dQ: the warps tile the step");
};

// Where lane `lane` of warp `warp` adds element (mt, half, n tile nt, e) of its dQ tile, within its
// query block's accumulator region: a lane's four accumulators of one n tile (rows g and g + 8, two
// columns each) are 4 consecutive floats, so one float4 atomic takes the MMA's accumulator registers as
// they are (no moves into a new quadruple, whose registers the next atomic's operands then waited for:
// ncu source view), and the 32 lanes of one atomic write 128 consecutive floats (four 128-byte lines).
// Its inverse, for the conversion: dq_acc_cell.
template <int D>
__host__ __device__ constexpr int dq_acc_index(int warp, int mt, int half, int nt, int lane) {
  using Ti = Tiles<D>;
  return (((((warp * Ti::kDqM + mt) * (2 * Ti::kDqN) + nt) * 32 + lane) * 2) + half) * 2;
}
// The (row, column) of the query block that position `at` of its region holds.
template <int D>
__host__ __device__ constexpr void dq_acc_cell(int at, int& row, int& col) {
  using Ti = Tiles<D>;
  const int e = at % 2, half = at / 2 % 2, lane = at / 4 % 32, nt = at / 128 % (2 * Ti::kDqN),
            mt = at / (256 * Ti::kDqN) % Ti::kDqM, warp = at / (256 * Ti::kDqN * Ti::kDqM);
  row = (warp % Ti::kDqRowWarps) * Ti::kDqM * 16 + 16 * mt + lane / 4 + 8 * half;
  col = Ti::dq_col(warp / Ti::kDqRowWarps, nt) + 2 * (lane % 4) + e;
}

struct BwdParams {
  const void *q, *k, *v, *o, *d_o;
  const float* lse;
  void *dq, *dk, *dv;
  // dQ's fp32 accumulator, per query head acc_rows = tokens + B kQueries rows of D: a sequence's query
  // block blk is the kQueries x D region at row first(seq) + seq kQueries + blk kQueries (a partial
  // block's padding its own), in the order its warps' atomics write (dq_acc_index).
  float* dq_acc;
  std::int64_t acc_rows;
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

// CTAs an SM holds: two for a dense batch at D 32 on sm_90, whose 128 registers a thread allow it;
// one elsewhere (sm_80/89's code and a varlen batch's sequence state spill at 128, and above D 32
// dK and dV alone take D / 2 registers).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr bool kTwoCtasAtD32 = false;
#else
constexpr bool kTwoCtasAtD32 = true;
#endif
template <int D, bool kVarlen>
constexpr int ctas_per_sm() {
  return D <= 32 && !kVarlen && kTwoCtasAtD32 ? 2 : 1;
}

// K and V [kKeys][kLd], kBuffers Q and dO tiles [kQueries][kLd], P and dS [kQueries][kScoreLd], all
// 16-bit; kBuffers LSE and row-sum rows [kQueries] fp32;
// the query-block bounds and the sequence's first query row and lengths (8 ints).
template <int D, int kBuffers = kDoubleBuffer>
constexpr std::size_t smem_bytes() {
  using Ti = Tiles<D>;
  return (2 * Ti::kKeys * Ti::kLd + 2 * kBuffers * Ti::kQueries * Ti::kLd + 2 * Ti::kQueries * Ti::kScoreLd) *
             2 +
         2 * kBuffers * Ti::kQueries * sizeof(float) + 8 * sizeof(int);
}
// The lean tiles are compiled where the double-buffered ones exceed sm_80's shared memory (D 64, 128,
// 192, 224, 256; at D 128 and 192 by the 32 bytes of the bounds alone): there they are what an A100
// runs, and on other GPUs a knob (bwd_buffers = 1).
template <int D>
constexpr bool lean_compiled() {
  return smem_bytes<D, kDoubleBuffer>() > smem::kSm80Optin;
}

// An operand in shared memory: its tile, row stride (elements) and the warp's origin in it (row, and a
// column that is a multiple of 8), the tile XOR-swizzled (Tiles::kSwizzle) or not.
// kAligned: the lane's chunk at the origin and every compile-time chunk offset have no low three bits
// in common (the origin's column a multiple of 64 and even offsets, or below 64 with offsets that are
// multiples of its span: Tiles' interleaved column warps), which lets the swizzle of an offset fold
// into an immediate (chunk_addr).
template <typename T, bool kSwz, bool kAligned = false>
struct SmemOperand {
  const T* tile;
  int ld, row0, col0;
};
// The shared address of 16-byte chunk `chunk` + `ct` of a lane's row, given that row's address and its
// row % 8 (every block offset is a multiple of 16 rows, so row % 8 is the lane's); `chunk` is the lane's
// runtime chunk, `ct` an even compile-time offset. Aligned (SmemOperand), the low three bits of chunk
// and ct are disjoint, so chunk + ct = (high parts) + (low bits XORed), and the swizzle's XOR with
// row % 8 is one value a lane with the offset's own XOR an immediate, instead of one register a distinct
// offset (D 256's S and dP read 16 chunks a row: swizzled the plain way, their addresses spilled it).
// fa2_backward.cu checks at compile time that both forms agree on every chunk the kernel reads.
template <bool kSwz, bool kAligned>
__host__ __device__ __forceinline__ constexpr std::uint32_t chunk_addr(std::uint32_t row_addr, int row8,
                                                                       int chunk, int ct) {
  if constexpr (!kSwz) {
    return row_addr + 16u * static_cast<std::uint32_t>(chunk + ct);
  } else if constexpr (!kAligned) {
    return row_addr + 16u * static_cast<std::uint32_t>((chunk + ct) ^ row8);
  } else {
    return row_addr + 16u * static_cast<std::uint32_t>((chunk & ~7) + (ct & ~7)) +
           16u * static_cast<std::uint32_t>(((chunk & 7) ^ row8) ^ (ct & 7));
  }
}

// acc [16 kM x 16 kN] += A [16 kM x 16 kK] B [16 kK x 16 kN], both operands in shared memory (16-bit
// elements). Element (m, k) of A at row m, column k of its tile (from the operand's origin), or at row
// k, column m when kATrans (A stored transposed: P^T and dS^T read from P and dS); element (k, n) of B at
// row n, column k (K and V for S = Q K^T and dP = dO V^T), or at row k, column n when kBTrans. kBCol: a
// compile-time column offset of B's origin; kBNStride: with kBTrans, B's n-pairs every kBNStride
// 16-column blocks (Tiles' interleaved column warps) rather than side by side.
template <int kM, int kN, int kK, bool kATrans, bool kBTrans, int kBCol = 0, int kBNStride = 1, typename T,
          bool kASwz, bool kAAl, bool kBSwz, bool kBAl>
__device__ __forceinline__ void warp_mma(SmemOperand<T, kASwz, kAAl> a, SmemOperand<T, kBSwz, kBAl> b,
                                         int lane, float (&acc)[kM][2 * kN][4]) {
  // The lane's ldmatrix row and 16-byte chunk in each 16 x 16 block (the m16n8k16 fragment layouts).
  const int a_row = a.row0 + (kATrans ? (lane % 8) + 8 * (lane / 16) : lane % 16),
            a_chunk = a.col0 / 8 + (kATrans ? (lane / 8) % 2 : lane / 16);
  const int b_row = b.row0 + (kBTrans ? (lane % 8) + 8 * ((lane / 8) % 2) : (lane % 8) + 8 * (lane / 16)),
            b_chunk = b.col0 / 8 + (kBTrans ? lane / 16 : (lane / 8) % 2);
  const std::uint32_t a_addr = ptx::smem_addr(a.tile + a_row * a.ld),
                      b_addr = ptx::smem_addr(b.tile + b_row * b.ld);
  const int a8 = a_row % 8, b8 = b_row % 8;
#pragma unroll
  for (int kk = 0; kk < kK; ++kk) {
    std::uint32_t af[kM][4];
#pragma unroll
    for (int mt = 0; mt < kM; ++mt) {
      // Row blocks are 16 rows, column blocks 2 chunks.
      const int rows = kATrans ? kk * 16 : mt * 16, chunks = kATrans ? mt * 2 : kk * 2;
      const std::uint32_t at = chunk_addr<kASwz, kAAl>(a_addr + 2u * rows * a.ld, a8, a_chunk, chunks);
      if constexpr (kATrans)
        ptx::ldmatrix_x4_trans(at, af[mt]);
      else
        ptx::ldmatrix_x4(at, af[mt]);
    }
#pragma unroll
    for (int np = 0; np < kN; ++np) {
      std::uint32_t bf[4];
      const int rows = kBTrans ? kk * 16 : np * 16, chunks = kBTrans ? np * 2 * kBNStride : kk * 2;
      const std::uint32_t at =
          chunk_addr<kBSwz, kBAl>(b_addr + 2u * rows * b.ld, b8, b_chunk, chunks + kBCol / 8);
      if constexpr (kBTrans)
        ptx::ldmatrix_x4_trans(at, bf);
      else
        ptx::ldmatrix_x4(at, bf);
#pragma unroll
      for (int mt = 0; mt < kM; ++mt) {
        ptx::mma_16816<T>(acc[mt][2 * np], af[mt], bf[0], bf[1]);
        ptx::mma_16816<T>(acc[mt][2 * np + 1], af[mt], bf[2], bf[3]);
      }
    }
  }
}

// Rows [row0, row0 + kRows) of two BSHD tensors with the same row stride `ld` (elements), K and V or
// Q and dO, into padded or swizzled tiles (Tiles::kSwizzle); rows past `rows` are zero. 16-byte cp.async
// chunks: a thread copies column chunk c of rows r, r + kRowStep, ..., so its source advances by one stride a
// chunk and its destination by an immediate. (Each chunk's address computed from its row and column took
// about 8 integer instructions: at D 256 the loads were a third of the kernel's integer work, ncu.)
template <int D, int kRows, typename T>
__device__ __forceinline__ void load_tile_pair(T* tile_a, const T* base_a, T* tile_b, const T* base_b,
                                               std::int64_t ld, int row0, int rows) {
  // Swizzled, a pass covers whole groups of 8 rows, so every row a thread copies has its row % 8.
  constexpr int kChunks = D / 8,
                kRowStep = Tiles<D>::kSwizzle ? kThreads / kChunks / 8 * 8 : kThreads / kChunks,
                kIters = (kRows + kRowStep - 1) / kRowStep;
  static_assert(kRowStep > 0);
  const int r = static_cast<int>(threadIdx.x) / kChunks, c = static_cast<int>(threadIdx.x) % kChunks;
  if (r >= kRowStep) return;  // past the last whole row (D 96, 160, 224) or group of 8 rows (D 192)
  const std::int64_t first = (row0 + r) * ld + c * 8, step = kRowStep * ld;
  const int col = 8 * (Tiles<D>::kSwizzle ? c ^ (r % 8) : c);
  const std::uint32_t dst_a = ptx::smem_addr(tile_a + r * Tiles<D>::kLd + col),
                      dst_b = ptx::smem_addr(tile_b + r * Tiles<D>::kLd + col);
  if (row0 + kRows <= rows) {
    // A whole tile (every step but a sequence's last): two pointers advanced by the stride, no
    // per-row test or select (their arithmetic reused registers the cp.asyncs still read: ncu).
    const T* a = base_a + first;
    const T* b = base_b + first;
#pragma unroll
    for (int k = 0; k < kIters; ++k) {
      if (kRows % kRowStep != 0 && k == kIters - 1 && r + k * kRowStep >= kRows) break;
      const std::uint32_t to = k * kRowStep * Tiles<D>::kLd * 2;
      ptx::cp_async_16(dst_a + to, a, 16);
      ptx::cp_async_16(dst_b + to, b, 16);
      a += step;
      b += step;
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < kIters; ++k) {
    if (kRows % kRowStep != 0 && k == kIters - 1 && r + k * kRowStep >= kRows) break;
    const bool in = row0 + r + k * kRowStep < rows;
    const std::int64_t at = in ? first + k * step : 0;
    const std::uint32_t to = k * kRowStep * Tiles<D>::kLd * 2;
    ptx::cp_async_16(dst_a + to, base_a + at, in ? 16 : 0);
    ptx::cp_async_16(dst_b + to, base_b + at, in ? 16 : 0);
  }
}

// A warp's [16 kM x 16 kN] fp32 accumulator tile row by row (the m16n8k16 C layout): row_op(r), r the
// row within the tile, does the row's work once and returns the element operation, applied as
// e = element_op(c, e) with c the element's column within the tile.
template <int kM, int kN, class RowOp>
__device__ __forceinline__ void for_each_row(float (&acc)[kM][2 * kN][4], int lane, RowOp&& row_op) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mt = 0; mt < kM; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const auto element_op = row_op(mt * 16 + g + 8 * half);
#pragma unroll
      for (int nt = 0; nt < 2 * kN; ++nt)
#pragma unroll
        for (int cc = 0; cc < 2; ++cc) {
          float& e = acc[mt][nt][2 * half + cc];
          e = element_op(nt * 8 + 2 * t + cc, e);
        }
    }
}

// Stores a warp's [16 kM x 16 kN] fp32 accumulator as T into a [.. x ld] shared-memory tile at its
// origin `dst` (P and dS for the GEMMs after the barrier).
template <typename T, int kM, int kN>
__device__ __forceinline__ void store_scores(T* dst, int ld, int lane, const float (&acc)[kM][2 * kN][4]) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mt = 0; mt < kM; ++mt)
#pragma unroll
    for (int nt = 0; nt < 2 * kN; ++nt)
#pragma unroll
      for (int half = 0; half < 2; ++half)
        *reinterpret_cast<std::uint32_t*>(dst + (mt * 16 + g + 8 * half) * ld + nt * 8 + 2 * t) =
            ptx::pack2<T>(acc[mt][nt][2 * half], acc[mt][nt][2 * half + 1]);
}

}  // namespace attn::fa2::bwd
