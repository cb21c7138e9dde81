// fa3.wgmma kernel body (sm_90a): a FlashAttention-3 class forward on Hopper's asynchronous units.
//
// A CTA is a producer warpgroup and WGs (2 or 3) consumer warpgroups over 64 WGs query rows of one
// (batch, head):
//   the producer gives up its registers (setmaxnreg) and one thread issues TMA loads: Q once, then
//   per key tile K and V into a ring of `Stages` slots, each slot guarded by a "full" mbarrier (TMA
//   transaction bytes) and an "empty" one (the consumer warps' arrivals);
//   the consumers take the registers and own 64 rows each: S = Q K^T by wgmma from shared memory,
//   the online softmax in registers, O += P V by wgmma with P as the register A operand, O in fp32
//   registers to the end.
// Two overlaps hide the softmax under tensor-core work:
//   inside a warpgroup, tile j's Q K^T and tile j-1's P V are issued together and the softmax of j
//   runs while P V of j-1 is still in flight (O takes j-1's rescale between the two issues);
//   between the warpgroups, named barriers pass the right to issue wgmmas round-robin (ping-pong with
//   two), so one warpgroup's softmax runs under the others' GEMMs.
// Persistent: one CTA an SM; its producer draws work items (row block, head, batch) from a global
// counter in the order of fa3_work_order.hpp (heaviest row blocks first, heads in L2-sized sections)
// and starts the next item's loads while the consumers finish the last one (with QBufs = 2 its Q goes
// into the other buffer while the consumers still read this one's). Key tiles run from the
// highest down, so the masked diagonal tile of a causal row block comes first. Keys past Sk and rows
// past Sq arrive as zeros from TMA and are masked (keys) or not stored (rows).
// Clustered (Cluster = 2, full masks): a work item is two adjacent row blocks of a head, one a CTA;
// each CTA's producer loads half of every K/V tile into both CTAs by TMA multicast, and a slot is
// free once the consumers of both have released it. One L2 read feeds two SMs: fa3.wgmma read
// twice cuDNN's L2 bytes without it, and lost clock to the power cap (docs/PERF.md).
// Epilogue: O / l from registers to global memory, or (TmaStore) into a swizzled shared-memory tile
// that one thread of each consumer warpgroup hands to TMA stores.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/cluster_ptx.cuh"
#include "kernels/common/mma_ptx.cuh"
#include "kernels/common/tma_ptx.cuh"
#include "kernels/common/wgmma_ptx.cuh"
#include "kernels/fa2/fa2_head_offsets.cuh"
#include "kernels/fa3/fa3_params.hpp"
#include "kernels/fa3/fa3_tile_ops.cuh"
#include "kernels/fa3/fa3_traits.hpp"
#include "kernels/fa3/fa3_work_order.hpp"
#include "kernels/ffpa/ffpa_key_tiles.cuh"

namespace attn::fa3 {

using ::attn::ptx::kNegInf;
using ::attn::ptx::pack2;
using ::attn::ptx::smem_addr;

template <typename T, int D, int BN, int Stages, int WGs, int Cluster, int QBufs, bool TmaStore>
__global__ void __launch_bounds__(128 * (1 + WGs), 1)
    fa3_forward_kernel(const __grid_constant__ Fa3Params p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr Tile kTile{BN, Stages, WGs, Cluster, QBufs, TmaStore};
  static_assert(Cluster == 1 || (Cluster == 2 && BN % 16 == 0),
                "a cluster's CTAs each load BN / 2 keys of a tile: whole 8-row swizzle atoms");
  constexpr int kBlockM = rows_of(kTile);
  constexpr int kChunks = D / kChunk;
  constexpr int kPvN = pv_width(D), kPvSteps = D / kPvN;
  constexpr int kQChunkBytes = kBlockM * 128;  // one 64-column box of Q
  constexpr int kKvChunkBytes = BN * 128;      // one 64-column box of a K or V tile
  constexpr int kSlotBytes = kv_slot_bytes(D, BN);
  constexpr int kConsumerWarps = 4 * WGs;
  constexpr int kPairThreads = 256;  // a turn barrier: one warpgroup syncs, the one before arrives
  // The epilogue stores 16 bytes a lane after a quad transpose at D 256 (64 4-byte stores a thread
  // before: +4-5% at S 2048) and at D 128 without a cluster (+3% causal S 2048); the clustered D 128
  // tile ran 1-2% slower with them and D 64 level to 2% slower (PERF.md): 4-byte stores there.
  constexpr bool kWideStores = D == 256 || (D == 128 && Cluster == 1);
  // Conditional rescaling with two consumer warpgroups (+2-12% at D 128 and 256, PERF.md). Three (D 64)
  // have 160 registers a thread: the branch around O's rescale under Q K^T spilled there, and the
  // same rescale once P V has landed (no spill, 466 instead of 493 instructions a tile) ran 1-3% slower.
  constexpr bool kLazyRescale = WGs == 2;

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const std::uint32_t q_s = (smem_addr(smem_raw) + 1023u) & ~1023u;
  constexpr std::uint32_t kQBytes = q_bytes(D, kTile);
  const std::uint32_t k_s = q_s + QBufs * kQBytes;
  const std::uint32_t v_s = k_s + static_cast<std::uint32_t>(Stages * kSlotBytes);
  // O's staging tile (TmaStore): per consumer warpgroup D / 64 chunks of [64 rows][128 bytes], swizzled
  // as the O tensor map's boxes are.
  const std::uint32_t o_s = v_s + static_cast<std::uint32_t>(Stages * kSlotBytes);
  const std::uint32_t bars = o_s + static_cast<std::uint32_t>(o_stage_bytes(D, kTile));
  // Q full (of Q buffer b) also hands the consumers that buffer's work item (work_slot(b)); Q empty
  // says they have read it and their last Q K^T of the item is done.
  constexpr int kQBars = 2 * QBufs;
  const auto q_full = [&](int b) { return bars + 8u * static_cast<std::uint32_t>(b); };
  const auto q_empty = [&](int b) { return bars + 8u * static_cast<std::uint32_t>(QBufs + b); };
  const auto k_full = [&](int s) { return bars + 8u * static_cast<std::uint32_t>(kQBars + s); };
  const auto v_full = [&](int s) { return bars + 8u * static_cast<std::uint32_t>(kQBars + Stages + s); };
  const auto k_empty = [&](int s) { return bars + 8u * static_cast<std::uint32_t>(kQBars + 2 * Stages + s); };
  const auto v_empty = [&](int s) { return bars + 8u * static_cast<std::uint32_t>(kQBars + 3 * Stages + s); };
  // The item the producer took for Q buffer b (n_work: none left), after the barriers.
  volatile int* const work_slots = reinterpret_cast<volatile int*>(
      smem_raw + (bars - smem_addr(smem_raw)) + 8u * static_cast<std::uint32_t>(kQBars + 4 * Stages));
  const auto work_slot = [&](int b) -> volatile int& { return work_slots[2 * b]; };

  const int tid = static_cast<int>(threadIdx.x);
  // A work item is Cluster adjacent row blocks of one (head, batch), one a CTA of the cluster; with
  // an odd count the last item's second block lies past Sq (TMA reads it as zeros, nothing is
  // stored) so that both CTAs visit the same key tiles and load their halves of each.
  const int rank = Cluster > 1 ? cluster::cta_rank() : 0;
  const int m_blocks = (p.seq_q + kBlockM - 1) / kBlockM;
  const int m_units = (m_blocks + Cluster - 1) / Cluster;
  const int n_work = m_units * p.heads_q * p.batch;
  const auto item_of = [&](int w) {
    WorkItem wi = work_item(w, m_units, p.heads_q, p.batch, p.section_heads);
    wi.m_block = wi.m_block * Cluster + rank;
    return wi;
  };
  // Persistent: each CTA's producer takes the next item of the ordered list from a global counter
  // (dynamic: a CTA that drew light causal blocks takes more of them) and runs ahead into it (its Q
  // and first K/V tiles) while the consumers finish the last one's epilogue. The launch leaves the
  // counters at zero (the last CTA to stop drawing resets them), so each launch, a CUDA graph's
  // replays included, starts from an empty count. A cluster's CTAs must take the same items: they
  // walk the list with a static stride instead (full masks only, whose items all cost the same).
  const auto key_tiles_of = [&](const WorkItem& wi) {
    return ffpa::key_tiles(p, wi.m_block * kBlockM, kBlockM, BN);
  };

  if (tid == 0) {
#pragma unroll
    for (int b = 0; b < QBufs; ++b) {
      tma::mbar_init(q_full(b), 1);
      tma::mbar_init(q_empty(b), kConsumerWarps);
    }
#pragma unroll
    for (int s = 0; s < Stages; ++s) {
      tma::mbar_init(k_full(s), 1);
      tma::mbar_init(v_full(s), 1);
      // Every consumer warp of the cluster frees a slot: the CTAs write into each other's.
      tma::mbar_init(k_empty(s), kConsumerWarps * Cluster);
      tma::mbar_init(v_empty(s), kConsumerWarps * Cluster);
    }
    tma::fence_mbar_init();
  }
  // Before any CTA of the cluster multicasts onto the others' barriers, all are initialised.
  if constexpr (Cluster > 1) {
    cluster::arrive();
    cluster::wait();
  } else {
    __syncthreads();
  }

  if (tid < 128) {
    // ---- producer
    tma::regs_release<producer_regs(kTile)>();
    if (tid == 0) {
      tma::prefetch_map(&p.q_map);
      tma::prefetch_map(&p.k_map);
      tma::prefetch_map(&p.v_map);
      int stage = 0, qb = 0;
      std::uint32_t free_parity = 1, q_free_parity = 1;  // fresh buffers count as released
      int next_static = static_cast<int>(blockIdx.x) / Cluster;
      // A draw when the item before is all issued: drawing an item ahead (the atomic's round trip under
      // this item's loads) cost 1-3% with a causal mask, where it reserves items before they are due.
#pragma unroll 1
      while (true) {
        int w = n_work;
        if constexpr (Cluster > 1) {
          w = next_static < n_work ? next_static : n_work;
          next_static += static_cast<int>(gridDim.x) / Cluster;
        } else {
          const unsigned drawn = atomicAdd(&p.work_counter[0], 1u);
          w = drawn < static_cast<unsigned>(n_work) ? static_cast<int>(drawn) : n_work;
        }
        if (Cluster == 1 && w == n_work) {
          // This CTA's last draw. Once every CTA has made its own, nobody draws again: the last one
          // to get here zeroes both counters for the next launch.
          __threadfence();
          if (atomicAdd(&p.work_counter[1], 1u) == gridDim.x - 1) {
            atomicExch(&p.work_counter[0], 0u);
            atomicExch(&p.work_counter[1], 0u);
          }
        }
        const WorkItem wi = item_of(w < n_work ? w : 0);
        const ffpa::KeyTiles keys = key_tiles_of(wi);
        const int n_tiles = w < n_work ? keys.n_hi - keys.n_lo : 0;
        const int hkv = wi.h / p.group;
        // One K or V tile into its ring slot, once the consumers (of every CTA in the cluster) have
        // released the slot. In a cluster each CTA loads its BN / Cluster keys of the tile into all
        // of them (the tensor maps' boxes are that tall); each CTA's full barrier counts the whole tile.
        const auto load_kv = [&](const CUtensorMap* map, std::uint32_t ring, std::uint32_t full,
                                 std::uint32_t empty, int key0) {
          const std::uint32_t dst = ring + static_cast<std::uint32_t>(stage * kSlotBytes);
          tma::mbar_wait(empty, free_parity);
          tma::mbar_arrive_expect_tx(full, kSlotBytes);
#pragma unroll
          for (int c = 0; c < kChunks; ++c) {
            const std::uint32_t box = dst + static_cast<std::uint32_t>(c * kKvChunkBytes);
            if constexpr (Cluster == 1)
              tma::load_tile_4d(box, map, full, c * kChunk, hkv, key0, wi.b);
            else
              tma::load_tile_4d_multicast(box + static_cast<std::uint32_t>(rank * kKvChunkBytes / Cluster),
                                          map, full, c * kChunk, hkv, key0 + rank * (BN / Cluster), wi.b,
                                          static_cast<std::uint16_t>((1u << Cluster) - 1u));
          }
        };
        // At D <= 128 the first K tile goes before Q: its slot frees a tile before Q's buffer (the
        // last item's last Q K^T), so the next item's Q K^T waits only for Q: +4-6% at D 128 without
        // a mask, S 2048. At D 256 it cost 2-3% with a causal mask (two calls): Q first there.
        constexpr bool kKFirst = D <= 128;
        if (kKFirst && n_tiles > 0)
          load_kv(&p.k_map, k_s, k_full(stage), k_empty(stage), (keys.n_hi - 1) * BN);
        const int b = qb;
        tma::mbar_wait(q_empty(b), q_free_parity);
        if (++qb == QBufs) {
          qb = 0;
          q_free_parity ^= 1u;
        }
        work_slot(b) = w;
        if (n_tiles <= 0) {  // nothing to load: the arrival alone hands over the item (or the end)
          tma::mbar_arrive(q_full(b));
          if (w == n_work) break;
          continue;
        }
        tma::mbar_arrive_expect_tx(q_full(b), kQBytes);
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
          tma::load_tile_4d(q_s + b * kQBytes + static_cast<std::uint32_t>(c * kQChunkBytes), &p.q_map,
                            q_full(b), c * kChunk, wi.h, wi.m_block * kBlockM, wi.b);
#pragma unroll 1
        for (int it = 0; it < n_tiles; ++it) {
          const int key0 = (keys.n_hi - 1 - it) * BN;
          if (!kKFirst || it > 0) load_kv(&p.k_map, k_s, k_full(stage), k_empty(stage), key0);
          load_kv(&p.v_map, v_s, v_full(stage), v_empty(stage), key0);
          if (++stage == Stages) {
            stage = 0;
            free_parity ^= 1u;
          }
        }
      }
    }
    if constexpr (Cluster > 1) {  // stay until no CTA of the cluster can write here or arrive
      __syncwarp();
      cluster::arrive();
      cluster::wait();
    }
    return;
  }

  // ---- consumers
  tma::regs_claim<consumer_regs(kTile)>();
  // Consumer warpgroup 0 .. WGs - 1 (rows 64 cw ..). With two, read through a shuffle so that Q's
  // descriptors are known warp-uniform too (D 128: 712 -> 677 instructions a tile); with three (D 64)
  // that made the tile longer (500 -> 507), so there it stays as computed.
  const int cw = WGs == 2 ? __shfl_sync(0xffffffffu, tid / 128 - 1, 0) : tid / 128 - 1;
  const int warp = (tid % 128) / 32, lane = tid % 32;
  const int g = lane / 4, t4 = lane % 4;
  const int wg_row = 64 * cw + 16 * warp + g;  // block row of half 0
  // Named barrier 1 + w: "warpgroup w may issue its wgmmas"; the turn passes round-robin, across work
  // items too.
  const int my_turn = 1 + cw, next_turn = 1 + (cw + 1) % WGs;
  const std::uint32_t q_wg0 = q_s + static_cast<std::uint32_t>(cw * 64 * 128);

  // A warp's arrival: its lanes have all read what the barrier hands back (the work slot, a slot).
  const auto release = [&](std::uint32_t bar) {
    __syncwarp();
    if (lane == 0) tma::mbar_arrive(bar);
  };
  // A K or V slot: in a cluster the other CTA's producer writes into it too, so both hear of it.
  const std::uint32_t peer_bars = Cluster > 1 ? cluster::map_shared(bars, rank ^ 1) : 0u;
  const auto release_kv = [&](std::uint32_t bar) {
    __syncwarp();
    if (lane == 0) tma::mbar_arrive(bar);
    if (Cluster > 1 && lane == 1) cluster::mbar_arrive_remote(peer_bars + (bar - bars));
  };
  // The ring position of the next K/V tile, and the parity of the next Q: they run on across items
  // exactly as the producer's do.
  // With one Q buffer its parity toggles an item; with more, one counter of the items taken gives the
  // buffer (q_item % QBufs) and its parity (q_item / QBufs % 2): a buffer index and a parity as two
  // registers spilled at D 64's 160.
  int stage = 0, q_item = 0;
  std::uint32_t parity = 0, q_parity = 0;
  const auto q_buffer = [&]() { return QBufs == 1 ? 0 : q_item % QBufs; };
  // Turns pay at D 64 and 128 (5-8% over issuing whenever ready at D 64); at D 256, since O's rescale
  // moved under Q K^T, issuing whenever ready is level to +6% (causal S 8192): no turns there, as in
  // FlashAttention-3 (docs/PERF.md).
  constexpr bool kTurns = D != 256;
  const auto my_turn_begins = [&]() {
    if constexpr (kTurns) tma::named_sync(my_turn, kPairThreads);
  };
  const auto my_turn_ends = [&]() {
    if constexpr (kTurns) tma::named_arrive(next_turn, kPairThreads);
  };
  if (kTurns && cw == WGs - 1) tma::named_arrive(1, kPairThreads);  // warpgroup 0 issues first

  // O in wgmma's accumulator order, one row of o per P V instruction's kPvN columns: the 64-column
  // chunk c is o_at(32 c) .. o_at(32 c + 31).
  float o[kPvSteps][kPvN / 2];
  const auto zero_o = [&]() {
#pragma unroll
    for (int n = 0; n < kPvSteps; ++n)
#pragma unroll
      for (int i = 0; i < kPvN / 2; ++i) o[n][i] = 0.0f;
  };
  const auto o_at = [&](int f) -> float& { return o[f / (kPvN / 2)][f % (kPvN / 2)]; };
  std::uint32_t pa[BN / 16][4];  // the last softmax's P, for its P V
  float alpha[2];                // the last softmax's rescale, O's before the next P V
  RowState st;
  int prev = 0;  // the ring slot (and its parity) of the tile whose P V is next
  std::uint32_t prev_parity = 0;

  const auto issue_qk = [&](float(&s)[BN / 2], int slot, int qbuf) {
    const std::uint32_t kb = k_s + static_cast<std::uint32_t>(slot * kSlotBytes);
    const std::uint32_t q_wg = q_wg0 + static_cast<std::uint32_t>(qbuf) * kQBytes;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      // A descriptor's address field counts 16 bytes: the k16 slice 32 bytes on is + 2.
      const std::uint64_t qd = wgmma::desc_sw128(q_wg + static_cast<std::uint32_t>(c * kQChunkBytes));
      const std::uint64_t kd = wgmma::desc_sw128(kb + static_cast<std::uint32_t>(c * kKvChunkBytes));
#pragma unroll
      for (int kk = 0; kk < kChunk / 16; ++kk)
        mma_qk<T, BN>(s, desc_at(qd, 2 * kk), desc_at(kd, 2 * kk), c > 0 || kk > 0);
    }
  };
  const auto issue_pv = [&](int slot) {
    // V read transposed, its 64-column boxes kKvChunkBytes apart: the 16-key slice 2048 bytes on
    // is + 128.
    const std::uint32_t vb = v_s + static_cast<std::uint32_t>(slot * kSlotBytes);
#pragma unroll
    for (int n = 0; n < kPvSteps; ++n) {
      const std::uint64_t vd = wgmma::desc_sw128_mn(
          vb + static_cast<std::uint32_t>(n * (kPvN / kChunk) * kKvChunkBytes), kKvChunkBytes);
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) mma_pv<T, kPvN>(o[n], pa[kk], desc_at(vd, 128 * kk));
    }
  };
  // Pins the wgmma operands' register definitions on their side of an issue: without it the
  // compiler may move a write of O or P past the first wgmma, and ptxas then serialises every
  // wgmma of the kernel (info C7513).
  const auto fence_o_and_p = [&]() {
#pragma unroll
    for (int n = 0; n < kPvSteps; ++n) wgmma::fence_operands(o[n]);
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) wgmma::fence_operands(pa[kk]);
  };
  // O by the softmax's factors; with conditional rescaling only where a row of the warp moved.
  const auto rescale_o = [&](const float(&f)[2]) {
    if (!kLazyRescale || any_rescale(f))
#pragma unroll
      for (int n = 0; n < kPvSteps; ++n) scale_rows(o[n], f);
  };
  const auto advance = [&]() {
    // The slot P V reads next, through a shuffle like the ring position below: V's descriptors then
    // stay on the uniform datapath (without it D 128's bn 128 loop took 481 instructions instead of
    // 452, and D 256's 490 instead of 393 in a build of this loop).
    prev = __shfl_sync(0xffffffffu, stage, 0);
    prev_parity = parity;
    if (++stage == Stages) {
      stage = 0;
      parity ^= 1u;
    }
    // Read back through a shuffle so that the compiler knows the ring position is warp-uniform:
    // the K and V descriptors built from it then stay on the uniform datapath (fewer R2UR and
    // integer instructions a tile; SASS counts in the commit).
    stage = __shfl_sync(0xffffffffu, stage, 0);
  };

  // ---- epilogue of item w: the full row sums, O / l, LSE.
  const auto epilogue = [&](int w, const RowState& rs) {
    const WorkItem we = item_of(w);
    // TmaStore: the warpgroup's staging tile is free once the last item's stores have read it (its
    // first thread issued them); named barriers 4 .. 4 + WGs - 1 (the turns take 1 .. WGs).
    const std::uint32_t o_wg = o_s + static_cast<std::uint32_t>(cw * 64 * D * 2);
    if constexpr (TmaStore) {
      if (tid % 128 == 0) tma::store_wait_read();
      tma::named_sync(4 + cw, 128);
    }
    T* o_head = static_cast<T*>(p.o) + fa2::q_head_offset(p, we.b, we.h, D);
    float l[2];
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      l[hr] = rs.sum[hr];
      l[hr] += __shfl_xor_sync(0xffffffffu, l[hr], 1);
      l[hr] += __shfl_xor_sync(0xffffffffu, l[hr], 2);
    }
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int row = we.m_block * kBlockM + wg_row + 8 * hr;
      // Rows past Sq are left out by their stores alone (the TMA unit leaves them out itself), not by a
      // branch around the reads of O.
      const float inv = l[hr] > 0.0f ? 1.0f / l[hr] : 0.0f;  // a row with no visible key: O = 0
      T* o_row = o_head + static_cast<std::int64_t>(row) * p.q_row_stride;
      if constexpr (TmaStore) {
        // Row r of the warpgroup's 64 holds its 16-byte unit j at j ^ (r % 8): the 128-byte swizzle.
        const int r = 16 * warp + g + 8 * hr;
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
          for (int j = 0; j < 8; ++j)
            tma::st_shared_u32(
                o_wg + static_cast<std::uint32_t>(c * 64 * 128 + r * 128 + ((j ^ (r & 7)) << 4) + 4 * t4),
                pack2<T>(o_at(32 * c + 4 * j + 2 * hr) * inv, o_at(32 * c + 4 * j + 2 * hr + 1) * inv));
      } else if constexpr (kWideStores) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
          for (int j0 = 0; j0 < 8; j0 += 4) {
            std::uint32_t v[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
              const int f = 32 * c + 4 * (j0 + k) + 2 * hr;
              v[k] = pack2<T>(o_at(f) * inv, o_at(f + 1) * inv);
            }
            quad_transpose(v, t4);
            if (row < p.seq_q)
              *reinterpret_cast<uint4*>(o_row + c * kChunk + 8 * (j0 + t4)) =
                  make_uint4(v[0], v[1], v[2], v[3]);
          }
      } else {
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            const std::uint32_t v =
                pack2<T>(o_at(32 * c + 4 * j + 2 * hr) * inv, o_at(32 * c + 4 * j + 2 * hr + 1) * inv);
            if (row < p.seq_q) *reinterpret_cast<std::uint32_t*>(o_row + c * kChunk + 8 * j + 2 * t4) = v;
          }
      }
      if (p.lse != nullptr && t4 == 0 && row < p.seq_q)
        p.lse[(static_cast<std::int64_t>(we.b) * p.heads_q + we.h) * p.seq_q + row] =
            l[hr] > 0.0f ? (rs.max[hr] + log2f(l[hr])) * 0.6931471805599453f : kNegInf;
    }
    if constexpr (TmaStore) {
      wgmma::fence_proxy_async_smem();  // the warpgroup's writes, visible to the TMA unit
      tma::named_sync(4 + cw, 128);
      if (tid % 128 == 0) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
          tma::store_tile_4d(&p.o_map, o_wg + static_cast<std::uint32_t>(c * 64 * 128), c * kChunk, we.h,
                             we.m_block * kBlockM + 64 * cw, we.b);
        tma::store_commit();
      }
    }
  };
  // An item's last P V in a turn of its own, then its epilogue; O is zero afterwards.
  const auto finish_item = [&](int w) {
    tma::mbar_wait(v_full(prev), prev_parity);
    my_turn_begins();
    rescale_o(alpha);
    fence_o_and_p();
    wgmma::fence();
    issue_pv(prev);
    wgmma::commit();
    fence_o_and_p();
    my_turn_ends();
    wgmma::wait<0>();
    fence_o_and_p();
    release_kv(v_empty(prev));
    epilogue(w, st);
    zero_o();
  };

  zero_o();
#pragma unroll 1
  while (true) {
    const int qb = q_buffer();
    tma::mbar_wait(q_full(qb), QBufs == 1 ? q_parity : static_cast<std::uint32_t>(q_item / QBufs) & 1u);
    q_parity ^= 1u;
    // Read through a shuffle: the branches on the item that issue wgmmas are then known warp-uniform
    // (ptxas serialises every wgmma of the kernel when a GMMA's registers live across a path it cannot
    // prove uniform, info C7518).
    const int w = __shfl_sync(0xffffffffu, work_slot(qb), 0);
    if (w >= n_work) break;
    const WorkItem wi = item_of(w);
    const ffpa::KeyTiles keys = key_tiles_of(wi);
    const int n_tiles = keys.n_hi - keys.n_lo;
    const int row0 = wi.m_block * kBlockM;
    const int diag0 = row0 + wg_row + (p.seq_kv - p.seq_q);
    const auto is_masked = [&](int key0) { return key0 < keys.full_lo || key0 + BN > keys.full_hi; };

    if (n_tiles <= 0) {      // no visible key: O = 0, LSE = -inf
      release(q_empty(qb));  // read the item; no Q K^T will follow
      epilogue(w, RowState{});
    } else {
      // ---- the first tile: Q K^T alone.
      {
        const int key0 = (keys.n_hi - 1) * BN;
        float s[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) s[i] = 0.0f;
        tma::mbar_wait(k_full(stage), parity);
        my_turn_begins();
        wgmma::fence_operands(s);
        wgmma::fence();
        issue_qk(s, stage, qb);
        wgmma::commit();
        wgmma::fence_operands(s);
        my_turn_ends();
        wgmma::wait<0>();
        wgmma::fence_operands(s);
        release_kv(k_empty(stage));
        if (n_tiles == 1) release(q_empty(qb));  // the item's last Q K^T
        st = RowState{};
        online_softmax<BN, kLazyRescale>(s, p, is_masked(key0), key0, diag0, t4, st, alpha);
        pack_p<T, BN>(s, pa);
      }
      advance();

      // ---- the steady state: Q K^T of tile it with P V of tile it - 1.
#pragma unroll 1
      for (int it = 1; it < n_tiles; ++it) {
        const int key0 = (keys.n_hi - 1 - it) * BN;
        float s[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) s[i] = 0.0f;
        tma::mbar_wait(k_full(stage), parity);
        tma::mbar_wait(v_full(prev), prev_parity);
        my_turn_begins();
        wgmma::fence_operands(s);
        fence_o_and_p();
        wgmma::fence();
        issue_qk(s, stage, qb);
        wgmma::commit();
        // O takes the tile before's rescale while Q K^T runs, not after the softmax: the turn's
        // critical path loses D / 2 multiplies a thread (+2-4% at D 128 and 256, PERF.md).
        rescale_o(alpha);
        fence_o_and_p();
        wgmma::fence();
        issue_pv(prev);
        wgmma::commit();
        wgmma::fence_operands(s);
        fence_o_and_p();
        my_turn_ends();
        wgmma::wait<1>();  // Q K^T has landed; P V of the tile before is still running
        wgmma::fence_operands(s);
        release_kv(k_empty(stage));
        if (it == n_tiles - 1) release(q_empty(qb));  // Q is free for the next item's load
        online_softmax<BN, kLazyRescale>(s, p, is_masked(key0), key0, diag0, t4, st, alpha);
        wgmma::wait<0>();
        fence_o_and_p();
        release_kv(v_empty(prev));
        // P is packed only now: P V of the tile before read the old P until the wait (packing into
        // other registers and copying over makes ptxas serialise the wgmmas, info C7513).
        pack_p<T, BN>(s, pa);
        advance();
      }

      // ---- the last tile's P V.
      finish_item(w);
    }
    if constexpr (QBufs > 1) ++q_item;
  }
  // The staging tile must outlive the stores that read it.
  if (TmaStore && tid % 128 == 0) tma::store_wait_all();
  // The last warpgroup arrived once more than warpgroup 0 synced (its first arrival let 0 start).
  if (kTurns && cw == 0) tma::named_sync(1, kPairThreads);
  if constexpr (Cluster > 1) {
    cluster::arrive();
    cluster::wait();
  }
#else
  // Built for a target without wgmma and TMA: fail loudly rather than leave O unwritten.
  __trap();
#endif
}

}  // namespace attn::fa3
