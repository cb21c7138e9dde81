// ffpa.wgmma kernel body (sm_90a): split-D attention for large head dims on warpgroup MMAs.
//
// A CTA holds 128 query rows, 64 a warpgroup, and the O columns of one pass (ffpa_wgmma_traits.hpp).
// Per key tile of Bc keys (128; the wide kernels, whose O takes a quarter more columns, 96 for acc_f16
// and 64 for acc_f32) it streams D in 64-column chunks through a ring of shared-memory slots
// ("items": the tile's K chunks, each with its Q chunk unless Q is resident, then the pass's V
// chunks), one thread loading each item by TMA (boxes of 64 columns in the 128-byte swizzle wgmma
// reads; rows and columns past the tensor read as zeros) on the slot's mbarrier:
//   S (64 x Bc a warpgroup) accumulates over the K items: wgmma m64nBck16, A = Q, B = K, both
//   from shared memory;
//   the online softmax runs on S in registers (exp2, scale folded in) and packs P to 16-bit pairs
//   that are already wgmma's A-fragment layout;
//   O[:, chunk] += P V for each V item: wgmma m64n64k16, A = P from registers, B = V transposed.
// acc_f32 keeps S and O in fp32 (O unnormalised, divided by the row sum at the end). acc_f16 runs
// both in fp16 and keeps O normalised (O = U / l): before each tile's P V, O is scaled by
// l_old alpha / l_new and P by 1 / l_new, so O never holds the unnormalised sum, which overflows
// fp16 once l |v| > 65504. The softmax state (max, sum) is fp32 in both.
//
// Cluster mode (Form::cluster): the n_passes CTAs of a row block form a thread-block cluster; each forms
// S over its own O chunks' columns of D, and the partial S are added through distributed shared
// memory (ffpa_wgmma_exchange.cuh), so no CTA recomputes the others' Q·Kᵀ. acc_f16 runs a tile's P V
// one step late, under the next tile's exchange. The default for acc_f16 from D 672, where it measured
// faster than recomputing (ffpa_wgmma_traits.hpp cluster_by_default).
//
// The split form (Form::split): both warpgroups over the same 64 rows on 64-key tiles, Q resident. An
// item holds a chunk for each warpgroup: K chunks c and c + ceil(n / 2) (each warpgroup's partial S over
// its half of D's chunks), then V chunks of the two halves of the pass's O columns. After a tile's K
// items the partials are added through shared memory (ffpa_wgmma_exchange.cuh); both warpgroups then
// hold the same S and run the same softmax, and each adds P V into its own O columns.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/mma_ptx.cuh"
#include "kernels/common/tma_ptx.cuh"
#include "kernels/common/wgmma_ptx.cuh"
#include "kernels/fa2/fa2_head_offsets.cuh"
#include "kernels/ffpa/ffpa_key_tiles.cuh"
#include "kernels/ffpa/wgmma/ffpa_wgmma_exchange.cuh"
#include "kernels/ffpa/wgmma/ffpa_wgmma_params.hpp"
#include "kernels/ffpa/wgmma/ffpa_wgmma_traits.hpp"

namespace attn::ffpa_wgmma {

using ::attn::ffpa::key_tiles;
using ::attn::ffpa::KeyTiles;
using ::attn::ptx::exp2_approx;
using ::attn::ptx::kNegInf;
using ::attn::ptx::pack2;
using ::attn::ptx::smem_addr;

// S = Q K^T over a tile of Bc keys and O[:, chunk] += P V. Compiled: Bc 128, the wide kernels'
// wide_bc (fp32 accumulation 64, fp16 accumulation 96) and the split form's 64.
template <typename T, bool AccF16, int Bc>
struct WgmmaOps {
  static_assert(!AccF16 || std::is_same_v<T, __half>, "fp16 accumulation takes fp16 inputs");
  using Acc = std::conditional_t<AccF16, std::uint32_t, float>;  // fp16: packed half2
  static constexpr int kSRegs = AccF16 ? Bc / 4 : Bc / 2, kORegs = AccF16 ? 16 : 32;
  static constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;

  __device__ static void qk(Acc (&s)[kSRegs], std::uint64_t a, std::uint64_t b, int acc) {
    if constexpr (AccF16 && Bc == 128)
      wgmma::ss_m64n128k16_f16_f16(s, a, b, acc);
    else if constexpr (AccF16 && Bc == 96)
      wgmma::ss_m64n96k16_f16_f16(s, a, b, acc);
    else if constexpr (AccF16 && Bc == 64)
      wgmma::ss_m64n64k16_f16_f16(s, a, b, acc);
    else if constexpr (!AccF16 && Bc == 128 && kBf16)
      wgmma::ss_m64n128k16_f32_bf16(s, a, b, acc);
    else if constexpr (!AccF16 && Bc == 128)
      wgmma::ss_m64n128k16_f32_f16(s, a, b, acc);
    else if constexpr (!AccF16 && Bc == 64 && kBf16)
      wgmma::ss_m64n64k16_f32_bf16(s, a, b, acc);
    else if constexpr (!AccF16 && Bc == 64)
      wgmma::ss_m64n64k16_f32_f16(s, a, b, acc);
    else
      static_assert(Bc < 0, "no Q K^T wrapper for this key tile");
  }
  __device__ static void pv(Acc (&o)[kORegs], const std::uint32_t (&p)[4], std::uint64_t b) {
    if constexpr (AccF16)
      wgmma::rs_m64n64k16_f16_f16(o, p, b);
    else if constexpr (kBf16)
      wgmma::rs_m64n64k16_f32_bf16(o, p, b);
    else
      wgmma::rs_m64n64k16_f32_f16(o, p, b);
  }
};

// Accumulator element e (0..3) of 8-column block j, in the fp32 layout: e / 2 = row half (g, g + 8),
// e % 2 = column 2 t + e % 2. fp16 accumulators pack the two columns of a row half in one register.
template <int N>
__device__ __forceinline__ float acc_get(const float (&r)[N], int j, int e) {
  return r[4 * j + e];
}
template <int N>
__device__ __forceinline__ float acc_get(const std::uint32_t (&r)[N], int j, int e) {
  const __half2 h = *reinterpret_cast<const __half2*>(&r[2 * j + e / 2]);
  return e % 2 == 0 ? __low2float(h) : __high2float(h);
}
// Multiplies the row-half `half` of every block by f.
template <int N>
__device__ __forceinline__ void acc_scale_rows(float (&r)[N], const float (&f)[2]) {
#pragma unroll
  for (int j = 0; j < N / 4; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) r[4 * j + e] *= f[e / 2];
}
template <int N>
__device__ __forceinline__ void acc_scale_rows(std::uint32_t (&r)[N], const float (&f)[2]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {  // register 2 j + half
    __half2& h = *reinterpret_cast<__half2*>(&r[i]);
    h = __hmul2(h, __float2half2_rn(f[i % 2]));
  }
}

template <typename T, bool AccF16, bool QResident, int WGs, Form F = Form::passes>
__global__ void __launch_bounds__(threads_of(WGs), 3 - WGs)
    ffpa_wgmma_kernel(const __grid_constant__ WgmmaParams p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr bool kCluster = F == Form::cluster, kSplit = F == Form::split;
  // Cluster mode runs a tile's P V under the next tile's exchange (acc_f16: O, S and P fit the registers
  // together, 255 registers; acc_f32's S is fp32, 64 registers against 32, and so compiled ptxas spills 364
  // bytes).
  constexpr bool kLatePv = kCluster && AccF16;
  constexpr int Bc = bc_of(F, AccF16);  // keys a tile
  using Ops = WgmmaOps<T, AccF16, Bc>;
  using Acc = typename Ops::Acc;
  // The split form's warpgroups share their 64 rows.
  constexpr int kBr = kSplit ? rows_of(1) : rows_of(WGs), kThreads = threads_of(WGs);
  constexpr int kQTileBytes = q_tile_bytes(kSplit ? 1 : WGs);
  constexpr int kOChunks =
      (kSplit ? split_wg_cols(AccF16) : max_pass_cols(AccF16, F)) / kChunk;  // a warpgroup's
  constexpr int kRing = ring_slots(WGs, QResident);
  // Cluster mode and the split form: as many slots as fit beside the exchange buffers (3 to 6).
  const int ring_n = kCluster || kSplit ? p.ring_slots : kRing;
  // [Q chunk,] K chunk; a V chunk at the start. The split form: a chunk for each warpgroup.
  constexpr int kWgChunkBytes = Bc * 128;
  constexpr int kSlotBytes = kSplit ? split_slot_bytes() : slot_bytes(WGs, QResident, Bc);
  static_assert(!QResident || WGs == 2, "Q resident is compiled for the two-warpgroup CTA");
  static_assert(F == Form::passes || WGs == 2,
                "cluster, wide and split forms are compiled for two warpgroups");
  static_assert(!kSplit || QResident, "the split form keeps Q resident");

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const std::uint32_t smem0 = (smem_addr(smem_raw) + 1023u) & ~1023u;

  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  const int warp = (tid % 128) / 32, lane = tid % 32;
  const int g = lane / 4, t4 = lane % 4;

  const int m_blocks = static_cast<int>(gridDim.x) / p.n_passes;
  const int m_block = m_blocks - 1 - static_cast<int>(blockIdx.x) / p.n_passes;  // heavy causal blocks first
  const int pass = static_cast<int>(blockIdx.x) % p.n_passes;
  const int h = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int row0 = m_block * kBr;
  const int D = p.head_dim;
  const int n_dc = chunks_of(D);
  const int oc0 = pass * p.pass_chunks;
  const int n_oc = min(p.pass_chunks, n_dc - oc0);
  // The K (and Q) chunks this CTA's S is formed over: all of D, or in cluster mode its O chunks'.
  const int qk0 = kCluster ? oc0 : 0;
  const int n_qk = kCluster ? n_oc : n_dc;
  // The split form: warpgroup w contracts over chunks [w qk_half, ...) of D and owns O chunks
  // [oc0 + w oc_half, ...) of the pass; an item holds one chunk of each half.
  const int qk_half = kSplit ? (n_qk + 1) / 2 : n_qk, oc_half = kSplit ? (n_oc + 1) / 2 : n_oc;
  const int qk_first = kSplit ? wg * qk_half : 0, oc_first = kSplit ? oc0 + wg * oc_half : oc0;
  const int n_own_qk = kSplit ? min(qk_half, n_qk - qk_first) : n_qk;
  const int n_own_oc = kSplit ? min(oc_half, n_oc - wg * oc_half) : n_oc;

  const int h_kv = h / p.group;

  const int diag_off = p.seq_kv - p.seq_q;
  const KeyTiles keys = key_tiles(p, row0, kBr, Bc);
  const int n_lo = keys.n_lo, n_hi = keys.n_hi, full_lo = keys.full_lo, full_hi = keys.full_hi;
  const int n_tiles = n_hi - n_lo;
  const int per_tile = qk_half + oc_half;  // items a tile
  const int total_items = n_tiles * per_tile;

  const std::uint32_t q_res = smem0;  // resident Q: chunk c at c * kQTileBytes
  const std::uint32_t ring =
      smem0 + static_cast<std::uint32_t>(QResident ? (kCluster ? p.pass_chunks : n_dc) * kQTileBytes : 0);
  // Cluster mode: the exchange's two barriers and two buffers after the ring (cluster_smem_bytes); the
  // split form: the warpgroups' partial S there (split_smem_bytes).
  const std::uint32_t after_ring = ring + static_cast<std::uint32_t>(ring_n * kSlotBytes);
  const ExchangeLayout<kThreads, Ops::kSRegs / 4> xc{after_ring, p.n_passes};
  // The mbarriers the TMA loads complete on, after everything else (kBarrierBytes): one a ring slot, then
  // Q's.
  const std::uint32_t bars =
      kCluster ? xc.end()
               : after_ring + static_cast<std::uint32_t>(kSplit ? split_exchange_bytes(AccF16) : 0);
  const auto full_bar = [&](int slot) { return bars + static_cast<std::uint32_t>(8 * slot); };
  const std::uint32_t q_bar = full_bar(ring_n);
  if (tid == 0) {
    for (int s = 0; s <= ring_n; ++s) tma::mbar_init(full_bar(s), 1);
    if constexpr (kCluster) {
      tma::mbar_init(xc.bar_scatter(), 1);
      tma::mbar_init(xc.bar_gather(), 1);
      xc.arm(pass);
    }
    tma::fence_mbar_init();
  }
  if constexpr (kCluster) {
    // No CTA pushes before every barrier of the cluster is initialised and armed.
    cluster::arrive();
    cluster::wait();
  } else {
    __syncthreads();
  }
  if constexpr (QResident) {
    if (tid == 0) {
      tma::mbar_arrive_expect_tx(q_bar, static_cast<std::uint32_t>(n_qk * kQTileBytes));
      for (int c = 0; c < n_qk; ++c)
        tma::load_tile_4d(q_res + static_cast<std::uint32_t>(c * kQTileBytes), &p.q_map, q_bar,
                          (qk0 + c) * kChunk, h, row0, b);
    }
  }

  // The item stream: tile t (keys of tile n_hi - 1 - t), items 0..qk_half-1 = K chunks, then V chunks.
  // Cluster mode runs a tile's P V one step late (below), so its stream is step t's K chunks, then tile
  // t - 1's V chunks (key row one tile up). Thread 0 issues every item's loads and walks the stream with
  // counters (no divisions in the loop).
  int issued = 0, issue_slot = 0, issue_i = 0, issue_step = 0, issue_key_row = (n_hi - 1) * Bc;
  const auto issue_next = [&]() {
    if (tid != 0 || issued == total_items) return;
    const std::uint32_t dst = ring + static_cast<std::uint32_t>(issue_slot * kSlotBytes);
    const std::uint32_t bar = full_bar(issue_slot);
    if (issue_i < qk_half) {
      const bool second = kSplit && qk_half + issue_i < n_qk;  // the split form's other half of D
      tma::mbar_arrive_expect_tx(bar, (QResident ? 0u : static_cast<std::uint32_t>(kQTileBytes)) +
                                          (second ? 2u : 1u) * kWgChunkBytes);
      if constexpr (!QResident) tma::load_tile_4d(dst, &p.q_map, bar, (qk0 + issue_i) * kChunk, h, row0, b);
      tma::load_tile_4d(dst + (QResident ? 0u : static_cast<std::uint32_t>(kQTileBytes)), &p.k_map, bar,
                        (qk0 + issue_i) * kChunk, h_kv, issue_key_row, b);
      if (second)
        tma::load_tile_4d(dst + kWgChunkBytes, &p.k_map, bar, (qk_half + issue_i) * kChunk, h_kv,
                          issue_key_row, b);
    } else {
      const int c = issue_i - qk_half;
      const bool second = kSplit && oc_half + c < n_oc;
      const int v_key_row = issue_key_row + (kLatePv ? Bc : 0);
      tma::mbar_arrive_expect_tx(bar, (second ? 2u : 1u) * kWgChunkBytes);
      tma::load_tile_4d(dst, &p.v_map, bar, (oc0 + c) * kChunk, h_kv, v_key_row, b);
      if (second)
        tma::load_tile_4d(dst + kWgChunkBytes, &p.v_map, bar, (oc0 + oc_half + c) * kChunk, h_kv, v_key_row,
                          b);
    }
    ++issued;
    issue_slot = issue_slot + 1 == ring_n ? 0 : issue_slot + 1;
    if (++issue_i == per_tile) {
      issue_i = 0;
      issue_key_row -= Bc;
      ++issue_step;
    }
    if constexpr (kLatePv) {
      if (issue_step == 0 && issue_i == qk_half) {  // no tile before the first
        issue_i = 0;
        issue_key_row -= Bc;
        issue_step = 1;
      }
      if (issue_step == n_tiles && issue_i == 0) issue_i = qk_half;  // the last step: V chunks only
    }
  };
  // A warpgroup leaves one item's wgmmas in flight while it waits for and issues the next, so a slot is
  // free once the item two back is done: ring_n - 2 items are loading while one is computed.
#pragma unroll 1
  for (int s = 0; s < ring_n - 2; ++s) issue_next();
  int slot_index = 0;
  std::uint32_t slot_phase = 0;
  // Past the barrier every warpgroup has waited for its wgmmas of the item two back, whose slot takes
  // the item ring_n - 2 ahead; then waits for this item's loads. Returns the item's slot.
  const auto acquire = [&]() -> std::uint32_t {
    __syncthreads();
    issue_next();
    const std::uint32_t slot = ring + static_cast<std::uint32_t>(slot_index * kSlotBytes);
    tma::mbar_wait(full_bar(slot_index), slot_phase);
    if (++slot_index == ring_n) {
      slot_index = 0;
      slot_phase ^= 1u;
    }
    return slot;
  };
  if constexpr (QResident) tma::mbar_wait(q_bar, 0);

  Acc o[kOChunks][Ops::kORegs];
#pragma unroll
  for (int c = 0; c < kOChunks; ++c)
#pragma unroll
    for (int i = 0; i < Ops::kORegs; ++i) o[c][i] = Acc{0};
  // Per thread two rows: g and g + 8 of its warp's 16. row_max is in log2 units (scale folded in).
  // acc_f32 keeps the thread's partial row sum; acc_f16 the full row sum l (O is normalised by it).
  float row_max[2] = {kNegInf, kNegInf}, row_sum[2] = {0.0f, 0.0f};
  const int wg_row = (kSplit ? 0 : 64 * wg) + 16 * warp + g;  // local row of half 0
  const std::uint32_t q_wg_off = static_cast<std::uint32_t>(kSplit ? 0 : wg * 64 * 128);

  // The softmax's outputs for the P V that follows it: P in wgmma's A-fragment order (k16 slice kk: (g,
  // keys 16kk + 2t), (g + 8, same), (g, +8), (g + 8, +8)) and the factor O takes first (alpha, or for
  // acc_f16 l_old alpha / l_new). O is scaled where its P V starts: scaled at the softmax, the next
  // tile's Q K^T would come between the scaling and O's wgmmas, and ptxas serialises every wgmma of the
  // kernel (info C7515).
  std::uint32_t pa[Bc / 16][4];
  float o_scale[2] = {1.0f, 1.0f};

  // ---- S = Q K^T over the tile's K items. The first wgmma ignores S's old values (scale-d = 0); the
  // zeros only end their live range at the softmax instead of carrying them across the tile.
  const auto qk_items = [&](Acc(&s)[Ops::kSRegs]) {
#pragma unroll
    for (int i = 0; i < Ops::kSRegs; ++i) s[i] = Acc{0};
#pragma unroll 1
    for (int c = 0; c < qk_half; ++c) {
      const std::uint32_t slot = acquire();
      if (c < n_own_qk) {  // the split form's second half may be a chunk shorter
        const std::uint32_t qa =
            (QResident ? q_res + static_cast<std::uint32_t>((qk_first + c) * kQTileBytes) : slot) + q_wg_off;
        const std::uint32_t kb = QResident
                                     ? slot + static_cast<std::uint32_t>(kSplit ? wg * kWgChunkBytes : 0)
                                     : slot + static_cast<std::uint32_t>(kQTileBytes);
        // A descriptor's address field counts 16 bytes: a k16 slice 32 bytes on is + 2.
        const std::uint64_t qd = wgmma::desc_sw128(qa), kd = wgmma::desc_sw128(kb);
        wgmma::fence();
#pragma unroll
        for (int kk = 0; kk < kChunk / 16; ++kk) Ops::qk(s, qd + 2 * kk, kd + 2 * kk, c > 0 || kk > 0);
        wgmma::commit();
      }
      wgmma::wait<1>();
    }
    // Unconditional, so that ptxas sees every path drain before S is read (a wait it cannot prove
    // makes it serialise every wgmma of the kernel: info C7514).
    wgmma::wait<0>();
    wgmma::fence_operands(s);
  };

  // ---- online softmax on S of the tile at key0; P packed as 16-bit pairs in pa.
  const auto softmax = [&](const Acc(&s)[Ops::kSRegs], int key0) {
    constexpr int kBlocks = Bc / 8, kCols = Bc / 4;  // 8-column blocks of S; a thread's columns a row
    float x[2][kCols];  // [row half][2 j + column]: block j's two columns of this thread
#pragma unroll
    for (int j = 0; j < kBlocks; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) x[e / 2][2 * j + e % 2] = acc_get(s, j, e) * p.scale_log2;
    if (key0 < full_lo || key0 + Bc > full_hi) {  // full_hi <= Sk: the key tail too
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        const int diag = row0 + wg_row + 8 * hr + diag_off;
        const int first = p.left >= 0 ? max(0, diag - p.left) : 0;
        const int end = p.right >= 0 ? min(p.seq_kv, diag + p.right + 1) : p.seq_kv;
#pragma unroll
        for (int j = 0; j < kBlocks; ++j)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            const int key = key0 + 8 * j + 2 * t4 + c;
            if (key < first || key >= end) x[hr][2 * j + c] = kNegInf;
          }
      }
    }
    float p_scale[2];
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      float mx = row_max[hr];
#pragma unroll
      for (int i = 0; i < kCols; ++i) mx = fmaxf(mx, x[hr][i]);
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float ref = mx == kNegInf ? 0.0f : mx;  // no visible key yet: every exp2 is 0
      const float alpha = exp2_approx(row_max[hr] - ref);
      row_max[hr] = mx;
      float tile_sum = 0.0f;
#pragma unroll
      for (int i = 0; i < kCols; ++i) {
        x[hr][i] = exp2_approx(x[hr][i] - ref);
        tile_sum += x[hr][i];
      }
      if constexpr (AccF16) {
        tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 1);
        tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 2);
        const float l_new = row_sum[hr] * alpha + tile_sum;
        o_scale[hr] = l_new > 0.0f ? row_sum[hr] * alpha / l_new : 0.0f;
        p_scale[hr] = l_new > 0.0f ? 1.0f / l_new : 0.0f;
        row_sum[hr] = l_new;
      } else {
        row_sum[hr] = row_sum[hr] * alpha + tile_sum;
        o_scale[hr] = alpha;
        p_scale[hr] = 1.0f;
      }
    }
#pragma unroll
    for (int kk = 0; kk < Bc / 16; ++kk)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int hr = r % 2, j = 2 * kk + r / 2;
        pa[kk][r] = pack2<T>(x[hr][2 * j] * p_scale[hr], x[hr][2 * j + 1] * p_scale[hr]);
      }
  };

  // ---- O = O o_scale + P V over the pass's V items; `after(c)` runs once V item c's wgmmas are issued.
  const auto pv_items = [&](auto&& after) {
#pragma unroll
    for (int c = 0; c < kOChunks; ++c) acc_scale_rows(o[c], o_scale);
#pragma unroll
    for (int c = 0; c < kOChunks; ++c) {
      if (c < oc_half) {
        const std::uint32_t slot = acquire();
        if (c < n_own_oc) {
          wgmma::fence_operands(o[c]);
          wgmma::fence();
          // A 16-key slice is 2048 bytes on: + 128.
          const std::uint64_t vd =
              wgmma::desc_sw128(slot + static_cast<std::uint32_t>(kSplit ? wg * kWgChunkBytes : 0));
#pragma unroll
          for (int kk = 0; kk < Bc / 16; ++kk) Ops::pv(o[c], pa[kk], vd + 128 * kk);
          wgmma::commit();
        }
        wgmma::wait<1>();  // chunk c's accumulators stay in flight; the next item writes others
        after(c);
      }
    }
    wgmma::wait<0>();  // the next P V rescales O, the next softmax rewrites P
#pragma unroll
    for (int c = 0; c < kOChunks; ++c) wgmma::fence_operands(o[c]);
#pragma unroll
    for (int kk = 0; kk < Bc / 16; ++kk) wgmma::fence_operands(pa[kk]);  // read by wgmma until the last wait
  };

  if constexpr (kLatePv) {
    // Cluster mode: step t forms tile t's partial S and sends it, runs tile t - 1's P V while the
    // copies fly (adding the others' partials halfway through it), then gathers S and runs tile t's
    // softmax. The exchange's two round trips over the SM-to-SM network overlap the tensor cores' P V
    // instead of stalling both warpgroups.
#pragma unroll 1
    for (int step = 0; step <= n_tiles; ++step) {
      const bool has_tile = step < n_tiles;
      Acc s[Ops::kSRegs];
      if (has_tile) {
        qk_items(s);
        exchange_send<kThreads>(s, xc, pass, tid, step);
      }
      if (step > 0) {
        const int add_after = (oc_half - 1) / 2;
        pv_items([&](int c) {
          if (has_tile && c == add_after) exchange_add<kThreads>(s, xc, pass, tid, step);
        });
      } else if (has_tile) {  // a row block with no visible key has no tile at all
        exchange_add<kThreads>(s, xc, pass, tid, step);
      }
      if (has_tile) {
        exchange_gather<kThreads>(s, xc, pass, tid, step);
        softmax(s, (n_hi - 1 - step) * Bc);
      }
    }
  } else {
#pragma unroll 1
    for (int tile = 0; tile < n_tiles; ++tile) {
      Acc s[Ops::kSRegs];
      qk_items(s);
      if constexpr (kCluster) {
        exchange_send<kThreads>(s, xc, pass, tid, tile);
        exchange_add<kThreads>(s, xc, pass, tid, tile);
        exchange_gather<kThreads>(s, xc, pass, tid, tile);
      }
      if constexpr (kSplit) add_other_warpgroup_s(s, after_ring, wg, tid % 128);
      softmax(s, (n_hi - 1 - tile) * Bc);
      pv_items([](int) {});
    }
  }

  // ---- epilogue: the full row sum, O / l (acc_f32), LSE (pass 0). Every load issued was waited for.
  // The other CTAs have read this CTA's last partial S before it exits (its shared memory goes).
  if constexpr (kCluster)
    if (n_tiles > 0) cluster::wait();
  T* o_head = static_cast<T*>(p.o) + fa2::q_head_offset(p, b, h, D);
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    float l = row_sum[hr];
    if constexpr (!AccF16) {
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
    }
    const int row = row0 + wg_row + 8 * hr;
    if (row >= p.seq_q) continue;
    // acc_f16's O is already normalised; a row with no visible key has O = 0 either way.
    const float inv = AccF16 ? 1.0f : (l > 0.0f ? 1.0f / l : 0.0f);
    T* o_row = o_head + static_cast<std::int64_t>(row) * p.q_row_stride;
#pragma unroll
    for (int c = 0; c < kOChunks; ++c)
      if (c < n_own_oc)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int col = (oc_first + c) * kChunk + 8 * j + 2 * t4;
          if (col < D)
            *reinterpret_cast<std::uint32_t*>(o_row + col) =
                pack2<T>(acc_get(o[c], j, 2 * hr) * inv, acc_get(o[c], j, 2 * hr + 1) * inv);
        }
    if (p.lse != nullptr && pass == 0 && t4 == 0 && (!kSplit || wg == 0))
      p.lse[(static_cast<std::int64_t>(b) * p.heads_q + h) * p.seq_q + row] =
          l > 0.0f ? (row_max[hr] + log2f(l)) * 0.6931471805599453f : kNegInf;
  }
#else
  // Built for a target without wgmma: fail loudly rather than leave O unwritten.
  __trap();
#endif
}

}  // namespace attn::ffpa_wgmma
