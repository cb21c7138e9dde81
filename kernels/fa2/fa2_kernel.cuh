// fa2.mma kernel body: FlashAttention-2 forward on mma.sync m16n8k16 (fp32 accumulation), ldmatrix
// from XOR-swizzled or padded shared memory (fa2_traits.hpp), cp.async K/V loads overlapped with compute
// (V_j lands during S = QK_j^T; K_{j-1} during softmax and PV with one K buffer, during all of tile j with
// two), online softmax in exp2 with the scale folded in, O in registers. S is computed for the whole K tile
// (Q's fragments read once a tile); exp2 and PV then run in steps of kSub keys where S and O would not fit
// together. One CTA = Br query rows of one (batch, head); each warp owns Br / warps rows and all Bc keys.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/mma_ptx.cuh"
#include "kernels/fa2/fa2_head_offsets.cuh"
#include "kernels/fa2/fa2_params.hpp"
#include "kernels/fa2/fa2_traits.hpp"

namespace attn::fa2 {

using namespace ::attn::ptx;  // NOLINT(google-build-using-namespace): the PTX wrappers

template <int D, int Br, int Bc, int Warps, int Stages>
struct KernelTraits {
  static constexpr int kKBufs = Stages;
  static constexpr int kD = D;
  static constexpr int kBr = Br;
  static constexpr int kBc = Bc;
  static constexpr int kWarps = Warps;
  static constexpr int kThreads = Warps * 32;
  static constexpr TileConfig kTile{Br, Bc, Warps, Stages};
  static constexpr bool kSwizzle = is_swizzled(D, kTile);   // see fa2_traits.hpp
  static constexpr int kStride = smem_row_elems(D, kTile);  // smem row [elements]
  static constexpr int kChunks = D / 8;                     // 16-byte chunks in a row of global memory
  static constexpr int kWarpRows = Br / Warps;
  static constexpr int kMTiles = kWarpRows / 16;
  static constexpr int kSmemQ = Br * kStride;   // [elements]
  static constexpr int kSmemKV = Bc * kStride;  // [elements]
  // Where S and O leave under 63 registers of the 255 for everything else (is_tight: D = 128 at
  // Bc = 64), each thread's running row sums live in shared memory, and the tile is compiled without
  // the band mask: with them in registers, or with the band test's state, ptxas spills 8-92 bytes
  // (measured at v9).
  static constexpr bool kTight = is_tight(D, kTile);
  // Q, Stages K buffers (K_{j-1} loads during all of tile j), one V buffer, then (kTight) each
  // thread's 2 * kMTiles row sums [bytes].
  static constexpr int kSmemBytes = smem_bytes(D, kTile);
  // Keys per exp2/PV step: the largest of Bc, Bc/2, Bc/4 whose S registers, with O's, stay within
  // kSubRegBudget a thread (kMTiles * (kSub + D) / 2 fp32 registers); S itself is computed for the
  // whole tile first, so Q's fragments are read once a tile, and its registers free step by step.
  static constexpr int kSubRegBudget = 160;
  static constexpr int kSub = kMTiles * (Bc + D) / 2 <= kSubRegBudget       ? Bc
                              : kMTiles * (Bc / 2 + D) / 2 <= kSubRegBudget ? Bc / 2
                                                                            : Bc / 4;
  static_assert(kSub % 16 == 0, "sub-tile of keys must be a multiple of 16");
  static_assert(D % 16 == 0 && D <= 256, "D must be a multiple of 16, at most 256");
  static_assert(Bc % 16 == 0, "Bc must be a multiple of 16");
  static_assert(kWarpRows == 16 || kWarpRows == 32, "each warp owns 16 or 32 query rows");
  static_assert(Br % Warps == 0, "rows split evenly over warps");
};

// Address of a lane's 16-byte chunk c + (its own chunk bit) in a tile row; `lane_base` is the
// lane's address for c = 0 (row start plus its physical chunk) and c is even (a compile-time step).
// Swizzled rows are 128-byte aligned, so the XOR only permutes the chunk within its line.
// The XOR is opaque (volatile asm) so that it is issued at each use rather than its four variants per
// operand kept in registers across the tile loop (hoisted, they spilled D=128's tight tile by 28 bytes
// when it was swizzled).
template <typename Tr>
__device__ __forceinline__ std::uint32_t chunk_addr(std::uint32_t lane_base, int c) {
  if constexpr (Tr::kSwizzle) {
    std::uint32_t a;
    asm volatile("xor.b32 %0, %1, %2;\n"
                 : "=r"(a)
                 : "r"(lane_base), "r"(static_cast<std::uint32_t>((c & 7) * 16)));
    return a + static_cast<std::uint32_t>((c >> 3) * 128);
  } else {
    return lane_base + static_cast<std::uint32_t>(c * 16);
  }
}

// Physical chunk of logical chunk c in tile row r (fa2_traits.hpp's smem_chunk).
template <typename Tr>
__device__ __forceinline__ int phys_chunk(int r, int c) {
  return smem_chunk(Tr::kSwizzle, r, c);
}

// ---- tile loads ---------------------------------------------------------------------------------

// Tile loads: a row of D elements is kChunks 16-byte chunks, copied by kLanesPerRow threads (the
// next power of two; the extra lanes of D = 96/160/224 idle). A thread always copies the same chunk
// of rows my_row + pass * kRowsPerPass, so its source is one pointer plus a per-pass stride, and
// its smem destination a constant offset per pass: few live registers across the main loop.
template <typename Tr>
struct TileLoader {
  static constexpr int kLanesPerRow = Tr::kChunks <= 4    ? 4
                                      : Tr::kChunks <= 8  ? 8
                                      : Tr::kChunks <= 16 ? 16
                                                          : 32;
  static constexpr int kRowsPerPass = Tr::kThreads / kLanesPerRow;
  // A pass moves the swizzle's row % 8 by kRowsPerPass, which XOR expresses only for multiples of 4.
  static_assert(!Tr::kSwizzle || kRowsPerPass % 4 == 0, "swizzled loads need 4k rows a pass");
  int my_row;
  int my_chunk;
  bool active;
  std::uint32_t smem_off;  // [bytes] within a tile

  __device__ __forceinline__ explicit TileLoader(int tid)
      : my_row(tid / kLanesPerRow),
        my_chunk(tid % kLanesPerRow),
        active(tid % kLanesPerRow < Tr::kChunks),
        smem_off(static_cast<std::uint32_t>((tid / kLanesPerRow) * Tr::kStride * 2 +
                                            phys_chunk<Tr>(tid / kLanesPerRow, tid % kLanesPerRow) * 16)) {}

  // Rows [row0, row0 + Rows) of a BSHD tensor (row stride ld [elements]); rows >= limit are
  // zero-filled so that padding keys give finite scores and 0 * V stays 0.
  template <int Rows, typename T>
  __device__ __forceinline__ void load(std::uint32_t s_tile, const T* g_base, int row0, int limit,
                                       std::int64_t ld) const {
    static_assert(Rows % kRowsPerPass == 0, "tile rows split evenly over passes");
    if (!active) return;
    const int rows_left =
        limit - row0 - my_row;  // this thread's rows with pass * kRowsPerPass < rows_left exist
    const T* src = g_base + static_cast<std::int64_t>(row0 + my_row) * ld + my_chunk * 8;
    const std::int64_t pass_stride = ld * kRowsPerPass;
#pragma unroll
    for (int pass = 0; pass < Rows / kRowsPerPass; ++pass) {
      const bool ok = pass * kRowsPerPass < rows_left;
      // (my_row + pass * kRowsPerPass) % 8 = my_row % 8 ^ (pass * kRowsPerPass) % 8 for 4k rows a pass.
      const std::uint32_t swz =
          Tr::kSwizzle ? static_cast<std::uint32_t>((pass * kRowsPerPass) % 8 * 16) : 0u;
      cp_async_16(
          s_tile + (smem_off ^ swz) + static_cast<std::uint32_t>(pass * kRowsPerPass * Tr::kStride * 2),
          ok ? static_cast<const void*>(src) : static_cast<const void*>(g_base), ok ? 16 : 0);
      // One running pointer: without this barrier the compiler keeps a pointer per pass live
      // across the main loop (16 registers a tensor for D=128) and spills.
      src += pass_stride;
      asm volatile("" : "+l"(src));
    }
  }
};

// ---- the kernel ---------------------------------------------------------------------------------

// kBand: the causal/window band test (or the compressed rule) is compiled in; without it only keys
// >= Sk are masked. kVarlen: blockIdx.z picks, through p.seq_order, a sequence of a packed varlen
// batch (p.cu_q, p.cu_kv) with its own lengths; its blocks past the sequence's rows return at once.
// kSelect: NSA's selected branch: the CTA's rows lie in one query block, whose selected key blocks
// (p.sel) become a list of key tiles in shared memory, visited from the diagonal down; the causal
// band masks the diagonal tiles. A dense launch compiles none of it, so its code is the same as before
// varlen and the selected branch existed.
template <typename T, typename Tr, bool kBand, bool kVarlen = false, bool kSelect = false>
__global__ void __launch_bounds__(Tr::kThreads, 1) fa2_fwd_kernel(const Fa2Params p) {
  static_assert(!(kBand && Tr::kTight), "the tight tiles are compiled without the band mask");
  static_assert(!kVarlen || kBand, "varlen launches take the band kernel: its tests follow each sequence");
  static_assert(!kSelect || (kBand && !kVarlen && Tr::kBr == kSelectRows),
                "selected-branch launches take the causal band, dense rows and 64-row tiles");
  constexpr int D = Tr::kD, Bc = Tr::kBc, Br = Tr::kBr, kMT = Tr::kMTiles;
  constexpr int kSub = Tr::kSub;
  constexpr int kNT = kSub / 8;              // n8 tiles of S in one sub-tile
  constexpr int kDT = D / 8;                 // n8 tiles of O
  constexpr int kStrideB = Tr::kStride * 2;  // [bytes]
  // Growth of a row's max [exp2 units] that moves its reference max: P stays below 2^8 = 256.
  constexpr float kLazyMaxLog2 = 8.0f;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* s_q = reinterpret_cast<T*>(smem_raw);
  T* s_k = s_q + Tr::kSmemQ;  // two buffers of kSmemKV
  T* s_v = s_k + Tr::kKBufs * Tr::kSmemKV;
  const std::uint32_t a_q = smem_addr(s_q), a_k = smem_addr(s_k), a_v = smem_addr(s_v);

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t4 = lane % 4;  // mma fragment coordinates: row group, thread in quad
  // Heavy causal row blocks (the last ones) are scheduled first.
  const int m_block = static_cast<int>(gridDim.x - 1 - blockIdx.x);
  const int h = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int row0 = m_block * Br;

  // The sequence's lengths and where its rows start: the parameters' for a dense launch.
  int seq_q = p.seq_q, seq_kv = p.seq_kv;
  std::int64_t q_off = 0, kv_off = 0;  // [elements]
  if constexpr (kVarlen) {
    const int sq = p.seq_order[b];  // grid.z runs the longest sequences first
    const int q_start = p.cu_q[sq], kv_start = p.cu_kv[sq];
    seq_q = p.cu_q[sq + 1] - q_start;
    seq_kv = p.cu_kv[sq + 1] - kv_start;
    if (row0 >= seq_q) return;  // the whole block: before any barrier
    q_off = (static_cast<std::int64_t>(q_start) * p.heads_q + h) * D;
    kv_off = (static_cast<std::int64_t>(kv_start) * p.heads_kv + h / p.group) * D;
  } else {
    q_off = q_head_offset(p, b, h, D);
    // The K/V head's offset, computed once: rebuilding it per tile from the block coordinates cost
    // an integer division by the group size and two S2R reads per load (v7).
    kv_off = kv_head_offset(p, b, h, D);
  }
  const T* q_base = static_cast<const T*>(p.q) + q_off;

  // Visible key range of the block: keys [key_lo, key_hi) hold every row's band.
  const int diag_off = seq_kv - seq_q;
  // The band's right edge per row: fill_params' right_add is Sk - Sq + right for a bounded band, and
  // 0 (never masking: right_mul is 0 too) for an unbounded one.
  const int right_add = kVarlen && p.right >= 0 ? p.right + diag_off : p.right_add;
  const int row_last = min(seq_q, row0 + Br) - 1;
  int key_lo = 0, key_hi = seq_kv;
  if constexpr (kBand) {
    if (p.left >= 0) key_lo = max(0, row0 + diag_off - p.left);
    key_hi = band_end(p, row_last, seq_q, seq_kv);
  }
  const int band_lo = key_lo / Bc;
  const int n_hi = key_hi > key_lo ? (key_hi + Bc - 1) / Bc : band_lo;
  // The selected branch's visit list: the diagonal block's tiles up to the last row (when the block
  // is selected: a file's table may leave it out), then each other selected block's tiles, from the
  // highest key down (as the band kernel's order). sel_first: its first tile, the first K load.
  int sel_iters = 0, sel_first = 0;
  int* const s_tiles = reinterpret_cast<int*>(s_v + Tr::kSmemKV);
  if constexpr (kSelect) {
    const int tiles_per_block = p.sel_block / Bc, qb = row0 / p.sel_block;
    const int* sel_row =
        p.sel +
        ((static_cast<std::int64_t>(b) * p.heads_kv + h / p.group) * p.sel_qblocks + qb) * p.sel_count;
    int selected = 0;  // entries before the -1 padding, ascending: only the last can be qb
    for (int e = 0; e < p.sel_count; ++e) selected += sel_row[e] >= 0 ? 1 : 0;
    const bool diag = selected > 0 && sel_row[selected - 1] == qb;
    const int diag_tiles = diag ? (row_last - qb * p.sel_block) / Bc + 1 : 0;
    const int whole = selected - (diag ? 1 : 0);  // blocks below the diagonal, all keys visible
    sel_iters = diag_tiles + whole * tiles_per_block;
    for (int it = tid; it < sel_iters; it += Tr::kThreads) {
      const int rest = it - diag_tiles;
      s_tiles[it] = rest < 0 ? qb * tiles_per_block + diag_tiles - 1 - it
                             : sel_row[whole - 1 - rest / tiles_per_block] * tiles_per_block +
                                   tiles_per_block - 1 - rest % tiles_per_block;
    }
    if (sel_iters > 0)
      sel_first = diag ? qb * tiles_per_block + diag_tiles - 1
                       : sel_row[whole - 1] * tiles_per_block + tiles_per_block - 1;
  }

  // The loop's counter runs n_hi - 1 down to n_lo: the key tiles themselves for the band kernel,
  // the visit list's positions (from its end) for the selected branch.
  const int n_lo = kSelect ? n_hi - sel_iters : band_lo;
  // Keys fully visible to every row of the block: [full_lo, full_hi).
  int full_lo = 0, full_hi = seq_kv;
  if constexpr (kBand) {
    if (p.left >= 0) full_lo = max(0, row_last + diag_off - p.left);
    full_hi = band_end(p, row0, seq_q, seq_kv);
  }

  // The loader's per-thread state is rebuilt from an opaque read of %tid at each use instead of
  // living in 4 registers across the loop (needed by the tight tiles; measured neutral to +3% on
  // the others, v9).
  const auto loader = []() {
    int t;
    asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(t));
    return TileLoader<Tr>(t);
  };
  loader().template load<Br>(a_q, q_base, row0, seq_q, p.q_row_stride);
  if (n_hi > n_lo)
    loader().template load<Bc>(a_k, static_cast<const T*>(p.k) + kv_off,
                               (kSelect ? sel_first : n_hi - 1) * Bc, seq_kv, p.kv_row_stride);
  cp_async_commit();

  float o[kMT][kDT][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int j = 0; j < kDT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[mt][j][e] = 0.0f;
  // The running row sums: registers, or (kTight) shared memory, one word a row, thread-major so a
  // warp's accesses hit 32 banks; they change twice a tile.
  float sum_regs[Tr::kTight ? 1 : kMT * 2];
  float* const row_sum = Tr::kTight ? reinterpret_cast<float*>(s_v + Tr::kSmemKV) + tid : sum_regs;
  constexpr int kSumStride = Tr::kTight ? Tr::kThreads : 1;
  float row_max[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[mt][r] = kNegInf;
      row_sum[(mt * 2 + r) * kSumStride] = 0.0f;
    }

  // Per-lane ldmatrix addresses [bytes] of chunk 0 (+ the lane's chunk bit); every row a lane reads
  // is lane%8 modulo 8. Q (A operand): rows lane%16, chunk bit lane/16. K (B operand, non-transposed):
  // keys lane%8 + 8*(lane/16), chunk bit (lane/8)%2. V (B operand through .trans): keys
  // lane%8 + 8*((lane/8)%2), chunk bit lane/16.
  const int warp_row0 = warp * Tr::kWarpRows;
  const std::uint32_t q_lane = a_q + static_cast<std::uint32_t>((warp_row0 + (lane & 15)) * kStrideB +
                                                                phys_chunk<Tr>(lane, lane >> 4) * 16);
  const std::uint32_t k_lane = a_k + static_cast<std::uint32_t>(((lane & 7) + ((lane >> 4) << 3)) * kStrideB +
                                                                phys_chunk<Tr>(lane, (lane >> 3) & 1) * 16);
  const std::uint32_t v_lane =
      a_v + static_cast<std::uint32_t>(((lane & 7) + (((lane >> 3) & 1) << 3)) * kStrideB +
                                       phys_chunk<Tr>(lane, lane >> 4) * 16);

  constexpr std::uint32_t kKBufBytes = Tr::kSmemKV * 2;
  std::uint32_t k_buf = 0;  // [bytes] offset of K_n's buffer; K_{n-1} goes to the other one
  for (int n = n_hi - 1; n >= n_lo; --n) {
    cp_async_wait_all();
    // K_n (and Q) landed; every warp finished the last tile's PV (s_v free) and QK (the other K
    // buffer free): issue V_n and K_{n-1} now, each overlapping everything up to its first use.
    __syncthreads();
    // The key tile of this iteration, and of the next: the selected branch reads its list (written
    // before the first barrier above).
    const int kt = kSelect ? s_tiles[n_hi - 1 - n] : n;
    loader().template load<Bc>(a_v, static_cast<const T*>(p.v) + kv_off, kt * Bc, seq_kv, p.kv_row_stride);
    cp_async_commit();
    const bool more = n > n_lo;
    const int kt_next = kSelect ? (more ? s_tiles[n_hi - n] : kt) : n - 1;
    if (Tr::kKBufs == 2 && more) {
      loader().template load<Bc>(a_k + (k_buf ^ kKBufBytes), static_cast<const T*>(p.k) + kv_off,
                                 kt_next * Bc, seq_kv, p.kv_row_stride);
      cp_async_commit();
    }
    const std::uint32_t k_lane_n = k_lane + k_buf;

    const int key0 = kt * Bc;
    // Mask only tiles that cross the band's edges or the end of the keys.
    const bool need_mask = kBand ? (key0 < full_lo || key0 + Bc > full_hi) : (key0 + Bc > seq_kv);

    // S = Q K^T over the whole tile (Q's fragments read once per tile), fp32.
    constexpr int kNTT = Bc / 8;  // n8 tiles of S over the tile
    float s[kMT][kNTT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int j = 0; j < kNTT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][j][e] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      std::uint32_t qa[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
        ldmatrix_x4(chunk_addr<Tr>(q_lane, 2 * kk) + mt * 16 * kStrideB, qa[mt]);
#pragma unroll
      for (int nj = 0; nj < Bc / 16; ++nj) {
        std::uint32_t kb[4];
        ldmatrix_x4(chunk_addr<Tr>(k_lane_n, 2 * kk) + nj * 16 * kStrideB, kb);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma_16816<T>(s[mt][2 * nj], qa[mt], kb[0], kb[1]);
          mma_16816<T>(s[mt][2 * nj + 1], qa[mt], kb[2], kb[3]);
        }
      }
    }

    if (need_mask) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          int first = 0, right_lim = 0;  // keys past Sk are masked by the Sk test
          if constexpr (kBand) {
            const int row = row0 + warp_row0 + mt * 16 + g + 8 * r;
            if (p.left >= 0) first = max(0, row + diag_off - p.left);
            right_lim = row + right_add;
          }
#pragma unroll
          for (int j = 0; j < kNTT; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int key = key0 + 8 * j + 2 * t4 + e;
              if (key < first || key >= seq_kv || key * p.right_mul > right_lim)
                s[mt][j][2 * r + e] = kNegInf;
            }
        }
    }

    if (Tr::kKBufs == 2 && more)
      cp_async_wait_but_one();
    else
      cp_async_wait_all();
    __syncthreads();  // V_n landed for every thread's copies (and, one buffer: K_n is free)
    if (Tr::kKBufs == 1 && more) {
      loader().template load<Bc>(a_k, static_cast<const T*>(p.k) + kv_off, kt_next * Bc, seq_kv,
                                 p.kv_row_stride);
      cp_async_commit();
    }

    // Online softmax: rows g and g + 8 of each m-tile; a row's 4 threads (one quad) share it. The
    // reference max is lazy (FlashAttention-4's conditional rescaling): a row moves it only when the
    // tile's max exceeds it by more than kLazyMaxLog2 in exp2's units, and the warp rescales O only
    // when one of its rows moved; otherwise P = exp2(scaled s - reference) stays below 2^kLazyMaxLog2,
    // where fp16/bf16 keep the same relative precision and the fp32 sums are far from overflow. After
    // the first tiles that skips the D / 2 * kMTiles multiplies of O a tile. exp2 and PV then run in
    // steps of kSub keys so that S's registers free as P (packed T pairs in the PV mma's A layout) is
    // used.
    bool moved = false;
    float alpha[kMT][2];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float mx = row_max[mt][r];
#pragma unroll
        for (int j = 0; j < kNTT; ++j) mx = fmaxf(mx, fmaxf(s[mt][j][2 * r], s[mt][j][2 * r + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        // -inf - -inf (no visible key yet) is NaN and compares false: the row keeps -inf.
        const bool move = (mx - row_max[mt][r]) * p.scale_log2 > kLazyMaxLog2;
        // A row whose max was -inf has O = 0 and sum 0: alpha = exp2(-inf) = 0 keeps them so.
        alpha[mt][r] = move ? exp2_approx((row_max[mt][r] - mx) * p.scale_log2) : 1.0f;
        if (move) row_max[mt][r] = mx;
        moved |= move;
      }
    if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          row_sum[(mt * 2 + r) * kSumStride] *= alpha[mt][r];
#pragma unroll
          for (int j = 0; j < kDT; ++j) {
            o[mt][j][2 * r] *= alpha[mt][r];
            o[mt][j][2 * r + 1] *= alpha[mt][r];
          }
        }
    }
#pragma unroll
    for (int sub = 0; sub < Bc / kSub; ++sub) {
      std::uint32_t pa[kMT][kSub / 16][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          // Recomputed from the row max rather than kept across the steps (4 registers).
          const float m_scaled = row_max[mt][r] == kNegInf ? 0.0f : row_max[mt][r] * p.scale_log2;
          float sum = 0.0f;
#pragma unroll
          for (int j = 0; j < kNT; ++j) {
            const int jj = sub * kNT + j;
            const float p0 = exp2_approx(fmaf(s[mt][jj][2 * r], p.scale_log2, -m_scaled));
            const float p1 = exp2_approx(fmaf(s[mt][jj][2 * r + 1], p.scale_log2, -m_scaled));
            sum += p0 + p1;
            pa[mt][j / 2][(j % 2) * 2 + r] = pack2<T>(p0, p1);
          }
          row_sum[(mt * 2 + r) * kSumStride] += sum;
        }
        // O += P V_n over the step's keys.
#pragma unroll
      for (int kk = 0; kk < kSub / 16; ++kk) {
#pragma unroll
        for (int dj = 0; dj < D / 16; ++dj) {
          std::uint32_t vb[4];
          ldmatrix_x4_trans(chunk_addr<Tr>(v_lane, 2 * dj) + (sub * kSub + kk * 16) * kStrideB, vb);
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt) {
            mma_16816<T>(o[mt][2 * dj], pa[mt][kk], vb[0], vb[1]);
            mma_16816<T>(o[mt][2 * dj + 1], pa[mt][kk], vb[2], vb[3]);
          }
        }
      }
    }
    if (Tr::kKBufs == 2) k_buf ^= kKBufBytes;
  }

  // Epilogue: normalise, stage O through s_q (16-byte coalesced stores), write LSE.
  cp_async_wait_all();
  __syncthreads();
  const int e_b = ctaid_z(), e_h = ctaid_y();
  const int e_row0 = (static_cast<int>(gridDim.x) - 1 - ctaid_x()) * Br;
  // Re-read like the coordinates, so that nothing of the sequence stays live across the loop.
  int e_seq_q = p.seq_q;
  std::int64_t o_off = 0, lse_off = 0;  // [elements] of the head's O rows and LSE row
  if constexpr (kVarlen) {
    const int sq = p.seq_order[e_b];
    const int q_start = p.cu_q[sq];
    e_seq_q = p.cu_q[sq + 1] - q_start;
    o_off = (static_cast<std::int64_t>(q_start) * p.heads_q + e_h) * D;
    lse_off = static_cast<std::int64_t>(q_start) * p.heads_q + static_cast<std::int64_t>(e_h) * e_seq_q;
  } else {
    o_off = q_head_offset(p, e_b, e_h, D);
    lse_off = (static_cast<std::int64_t>(e_b) * p.heads_q + e_h) * p.seq_q;
  }
  T* o_base = static_cast<T*>(p.o) + o_off;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float sum = row_sum[(mt * 2 + r) * kSumStride];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;  // no visible key: O = 0
      const int lrow = warp_row0 + mt * 16 + g + 8 * r;
#pragma unroll
      for (int j = 0; j < kDT; ++j) {
        const std::uint32_t pair = pack2<T>(o[mt][j][2 * r] * inv, o[mt][j][2 * r + 1] * inv);
        *reinterpret_cast<std::uint32_t*>(s_q + lrow * Tr::kStride + 8 * phys_chunk<Tr>(lrow, j) + 2 * t4) =
            pair;
      }
      const int row = e_row0 + lrow;
      if (p.lse != nullptr && t4 == 0 && row < e_seq_q) {
        // LSE = ln(sum_j exp(scale * s_ij)) = (max * scale * log2 e + log2 sum) * ln 2.
        const float lse =
            sum > 0.0f ? (row_max[mt][r] * p.scale_log2 + log2f(sum)) * 0.6931471805599453f : kNegInf;
        p.lse[lse_off + row] = lse;
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
      if (row < e_seq_q)
        *reinterpret_cast<uint4*>(o_base + static_cast<std::int64_t>(row) * p.q_row_stride + ch * 8) =
            *reinterpret_cast<const uint4*>(s_q + r * Tr::kStride + phys_chunk<Tr>(r, ch) * 8);
    }
  }
}

}  // namespace attn::fa2
