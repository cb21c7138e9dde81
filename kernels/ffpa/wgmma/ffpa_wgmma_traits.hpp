// ffpa.wgmma shape: what a CTA holds, how D is cut into passes, and the shared memory that takes.
// Host and device constexpr, shared by the kernel, the launch and the tests.
//
// A CTA is one or two warpgroups of 64 query rows over key tiles of Bc = 128, with D streamed
// in 64-column chunks (one 128-byte swizzle atom a row) through a ring of shared-memory slots.
// Each warpgroup keeps its rows' S (64 x 128) and its O columns in registers. O bounds the columns
// one CTA can produce: 64 rows x 256 fp32 or 512 fp16 columns is 128 registers a thread. Wider D
// is split into passes over O's columns, each its own CTA that recomputes S: 1.5x the QK work at
// two passes, which wgmma's rate pays for; shared memory stays constant in D with Q streamed.
// The wide acc_f16 kernel takes 640 fp16 columns (160 registers) in one pass on narrower key tiles
// (kWideBc: S, its fp32 copy and P shrink by the registers O grows), so D 544-640 needs no second pass.
#pragma once
#include "kernels/common/smem_optin.hpp"

namespace attn::ffpa_wgmma {

inline constexpr int kBc = 128;
inline constexpr int kChunk = 64;  // D columns per streamed item
// The wide acc_f16 kernel: O's 640 columns are 160 registers a thread; with 128-key tiles ptxas
// spills (S 32 + its fp32 copy 64 + P 32 beside O), with 96-key tiles it does not.
inline constexpr int kWideBc = 96;
inline constexpr int kWidePassCols = 640;
constexpr int bc_of(bool wide) { return wide ? kWideBc : kBc; }
// One K or V chunk: Bc keys of 128 bytes (128 keys: 16 KiB).
constexpr int kv_tile_bytes(bool wide) { return bc_of(wide) * 128; }
inline constexpr int kAlignSlack = 1024;  // the swizzle needs 1024-byte aligned tiles
inline constexpr int kMinHeadDim = 32;
inline constexpr int kMaxHeadDim = 1024;
inline constexpr int kMaxResidentHeadDim = 576;  // the largest D whose resident Q fits beside the ring
// The wide kernel's 96-key slots leave room for Q up to D 640 (160 KiB beside 5 slots of 12 KiB).
constexpr int max_resident_head_dim(bool wide) { return wide ? kWidePassCols : kMaxResidentHeadDim; }

// A CTA is `wgs` warpgroups of 64 query rows: 2 (one CTA an SM, K and V shared by 128 rows, Q may
// stay resident) or 1 (two CTAs an SM, each with its own ring and Q streamed: one CTA's softmax
// runs while the other's wgmmas do).
// Measured (H100, B=1 H=48 S=8192 fp16, same call, 15:59 UTC; TFLOPS at D = 320 / 512 / 640 / 1024):
//   2 warpgroups: acc_f16 504 / 551 / 346 / 366, acc_f32 318 / 340 / 243 / 198 (chosen);
//   1 warpgroup:  acc_f16 459 / 505 / 280 / 330, acc_f32 257 / 276 / 187 / 150 (K and V re-read per
//   64 rows, Q per tile).
inline constexpr int kDefaultWarpgroups = 2;
constexpr int rows_of(int wgs) { return 64 * wgs; }
constexpr int threads_of(int wgs) { return 128 * wgs; }
constexpr int q_tile_bytes(int wgs) { return rows_of(wgs) * 128; }
constexpr int ring_slots(int wgs, bool q_resident) { return wgs == 1 ? 4 : (q_resident ? 5 : 6); }
// A slot holds one K or V chunk, and with Q streamed the Q chunk of a K item in front of it.
constexpr int slot_bytes(int wgs, bool q_resident, bool wide = false) {
  return q_resident ? kv_tile_bytes(wide) : q_tile_bytes(wgs) + kv_tile_bytes(wide);
}

constexpr bool is_supported_head_dim(int d) { return d >= kMinHeadDim && d <= kMaxHeadDim && d % 32 == 0; }
// `wide`: the wide acc_f16 kernel (two warpgroups only).
constexpr int max_pass_cols(bool acc_f16, bool wide = false) {
  return acc_f16 ? (wide ? kWidePassCols : 512) : 256;
}
constexpr int chunks_of(int d) { return (d + kChunk - 1) / kChunk; }
constexpr int passes_of(int d, bool acc_f16, bool wide = false) {
  return (d + max_pass_cols(acc_f16, wide) - 1) / max_pass_cols(acc_f16, wide);
}
// Chunks of O a pass owns (the last pass may own fewer): the passes split D as evenly as chunks allow.
constexpr int pass_chunks(int d, bool acc_f16, bool wide = false) {
  return (chunks_of(d) + passes_of(d, acc_f16, wide) - 1) / passes_of(d, acc_f16, wide);
}
// The wide kernel by default where it saves a pass: acc_f16 at 512 < D <= 640 with two warpgroups.
// Measured (H200, B 1 H 48 S 8192 fp16, docs/PERF.md "ffpa.wgmma.acc_f16 in one pass up to D 640"):
// D 544 / 576 / 608 / 640 full mask 479 / 512 / 490 / 528 TFLOPS against 331 / 350 / 303 / 335 in two
// passes (cublas.unfused 336-377 in the same run); D 512 level (537 both).
constexpr bool wide_by_default(int d, bool acc_f16, int wgs) {
  return acc_f16 && wgs == 2 && d > 512 && d <= kWidePassCols;
}

constexpr int smem_bytes(int d, bool q_resident, int wgs, bool wide = false) {
  return kAlignSlack + (q_resident ? chunks_of(d) * q_tile_bytes(wgs) : 0) +
         ring_slots(wgs, q_resident) * slot_bytes(wgs, q_resident, wide);
}
// The most any head dim needs from each compiled kernel (its shared-memory opt-in).
constexpr int max_smem_bytes(bool q_resident, int wgs, bool wide = false) {
  return smem_bytes(q_resident ? max_resident_head_dim(wide) : kMaxHeadDim, q_resident, wgs, wide);
}

// Cluster mode (two warpgroups only): the passes of a row block are the CTAs of one thread-block
// cluster, and each forms Q·Kᵀ over its own O chunks' columns of D only. The partial S (a thread's
// accumulator registers, fp32 or packed fp16: G = 16 or 8 groups of 16 bytes) are added across the
// cluster through distributed shared memory, a reduce-scatter and an all-gather (each CTA owns G / C of
// the groups; ffpa_wgmma_kernel.cuh), so every CTA holds the same S, and so the same P, without
// recomputing Q·Kᵀ: the QK work is that of one pass at every D. A CTA keeps only its own chunks of Q.
inline constexpr int kMaxClusterPasses = 4;  // acc_f32 at D = 1024: 4 passes of 256 columns
// Off: sharing S through distributed shared memory measured 25-50% slower than recomputing it for
// acc_f32 at every D, and for acc_f16 5-8% slower at D 640, level at 768 and 1-12% faster at 896-1024
// in one call that ran it first (H100, 2026-11-27 22:28 UTC; docs/PERF.md "ffpa.wgmma cluster mode"):
// the exchange moves 32-64 KiB a CTA a tile over the SM-to-SM network with the tensor cores idle.
inline constexpr bool kClusterByDefault = false;
// Two barriers, a scatter buffer of (C - 1) x ceil(G / C) groups a thread and a stage buffer of G.
constexpr int exchange_bytes(int d, bool acc_f16) {
  const int groups = acc_f16 ? 8 : 16, ranks = passes_of(d, acc_f16), group_bytes = threads_of(2) * 16;
  return 16 + (ranks - 1) * ((groups + ranks - 1) / ranks) * group_bytes + groups * group_bytes;
}
// The ring beside Q and the exchange buffers: as many slots as fit in sm_90's shared memory, up to the
// usual 5 (Q resident) or 6; 0 where not even 3 fit (two items loading while one is computed need 4).
constexpr int cluster_ring_slots(int d, bool acc_f16, bool q_resident) {
  const int fixed =
      kAlignSlack + (q_resident ? pass_chunks(d, acc_f16) * q_tile_bytes(2) : 0) + exchange_bytes(d, acc_f16);
  const int fit = (static_cast<int>(smem::kSm90Optin) - fixed) / slot_bytes(2, q_resident);
  const int slots = fit < ring_slots(2, q_resident) ? fit : ring_slots(2, q_resident);
  return slots >= 3 ? slots : 0;
}
constexpr int cluster_smem_bytes(int d, bool acc_f16, bool q_resident) {
  return kAlignSlack + (q_resident ? pass_chunks(d, acc_f16) * q_tile_bytes(2) : 0) +
         cluster_ring_slots(d, acc_f16, q_resident) * slot_bytes(2, q_resident) + exchange_bytes(d, acc_f16);
}
// Cluster mode runs a head dim with Q resident or streamed where the ring has at least 3 slots.
constexpr bool cluster_fits(int d, bool acc_f16, bool q_resident) {
  return cluster_ring_slots(d, acc_f16, q_resident) >= 3;
}

// Q stays in shared memory (loaded once, a third less L2 traffic) where it fits beside the ring;
// only the two-warpgroup CTA keeps it (one warpgroup's CTA shares the SM with a second).
constexpr bool q_resident_by_default(int d, int wgs, int smem_limit, bool wide = false) {
  return wgs == 2 && d <= max_resident_head_dim(wide) && smem_bytes(d, true, wgs, wide) <= smem_limit;
}

}  // namespace attn::ffpa_wgmma
