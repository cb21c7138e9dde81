// ffpa.wgmma shape: what a CTA holds, how D is cut into passes, and the shared memory that takes.
// Host and device constexpr, shared by the kernel, the launch and the tests.
//
// A CTA is one or two warpgroups of 64 query rows over key tiles of Bc = 128, with D streamed
// in 64-column chunks (one 128-byte swizzle atom a row) through a ring of shared-memory slots.
// Each warpgroup keeps its rows' S (64 x 128) and its O columns in registers. O bounds the columns
// one CTA can produce: 64 rows x 256 fp32 or 512 fp16 columns is 128 registers a thread. Wider D
// is split into passes over O's columns, each its own CTA that recomputes S: 1.5x the QK work at
// two passes, which wgmma's rate pays for; shared memory stays constant in D with Q streamed.
// The wide kernels take a quarter more columns (acc_f16 640, acc_f32 320: 160 registers) on narrower
// key tiles (S, its fp32 copy and P shrink by the registers O grows), so acc_f16 runs D 544-640 in one
// pass and acc_f32 D 288-320 in one and 544-640 in two.
#pragma once
#include "kernels/common/smem_optin.hpp"

namespace attn::ffpa_wgmma {

inline constexpr int kBc = 128;
inline constexpr int kChunk = 64;         // D columns per streamed item
inline constexpr int kAlignSlack = 1024;  // the swizzle needs 1024-byte aligned tiles
inline constexpr int kMinHeadDim = 32;
inline constexpr int kMaxHeadDim = 1024;
// The wide kernels: O's columns a pass grow by a quarter (acc_f16 640 fp16, acc_f32 320 fp32: 160
// registers a thread), which fits beside S only on narrower key tiles: with 128-key tiles ptxas
// spills (acc_f16: S 32 + its fp32 copy 64 + P 32 beside O), with 96 keys (acc_f16) or 64 (acc_f32,
// whose S is fp32) it does not.
constexpr int wide_pass_cols(bool acc_f16) { return acc_f16 ? 640 : 320; }
constexpr int wide_bc(bool acc_f16) { return acc_f16 ? 96 : 64; }
constexpr int bc_of(bool wide, bool acc_f16) { return wide ? wide_bc(acc_f16) : kBc; }

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
// A slot holds one K or V chunk (bc keys of 128 bytes: 16 KiB at 128 keys), and with Q streamed the Q
// chunk of a K item in front of it.
constexpr int slot_bytes(int wgs, bool q_resident, int bc = kBc) {
  return q_resident ? bc * 128 : q_tile_bytes(wgs) + bc * 128;
}
// The largest D whose resident Q fits beside the two-warpgroup ring of bc-key slots: 576 at 128 keys,
// 640 at 96, 704 at 64.
constexpr int max_resident_head_dim(int bc = kBc) {
  const int room =
      static_cast<int>(smem::kSm90Optin) - kAlignSlack - ring_slots(2, true) * slot_bytes(2, true, bc);
  const int d = room / q_tile_bytes(2) * kChunk;
  return d < kMaxHeadDim ? d : kMaxHeadDim;
}
inline constexpr int kMaxResidentHeadDim = max_resident_head_dim();
static_assert(kMaxResidentHeadDim == 576, "docs/kernels/ffpa.md states Q resident up to D 576");

constexpr bool is_supported_head_dim(int d) { return d >= kMinHeadDim && d <= kMaxHeadDim && d % 32 == 0; }
// `wide`: the wide kernels (two warpgroups only).
constexpr int max_pass_cols(bool acc_f16, bool wide = false) {
  return wide ? wide_pass_cols(acc_f16) : acc_f16 ? 512 : 256;
}
constexpr int chunks_of(int d) { return (d + kChunk - 1) / kChunk; }
constexpr int passes_of(int d, bool acc_f16, bool wide = false) {
  return (d + max_pass_cols(acc_f16, wide) - 1) / max_pass_cols(acc_f16, wide);
}
// Chunks of O a pass owns (the last pass may own fewer): the passes split D as evenly as chunks allow.
constexpr int pass_chunks(int d, bool acc_f16, bool wide = false) {
  return (chunks_of(d) + passes_of(d, acc_f16, wide) - 1) / passes_of(d, acc_f16, wide);
}
// The wide kernel by default where it saves a pass and runs at most two, with two warpgroups.
// Measured (H200, B 1 H 48 S 8192 fp16, docs/PERF.md "ffpa.wgmma in one pass more": full mask,
// TFLOPS, cublas.unfused 234-377 in the same runs):
//   acc_f16 D 544 / 576 / 608 / 640: 479 / 512 / 490 / 528 against 331 / 350 / 303 / 335 in two passes;
//   acc_f32 D 288 / 320: 355 / 401 against 287 / 322 (one pass against two); D 576 / 640: 286 / 291
//   against 268 / 234 (two against three); D 832-960: 182-188 against 189-191 (three against four: the
//   64-key tiles cost more than the fourth pass, so not the default there).
constexpr bool wide_by_default(int d, bool acc_f16, int wgs) {
  return wgs == 2 && passes_of(d, acc_f16, true) < passes_of(d, acc_f16, false) &&
         passes_of(d, acc_f16, true) <= 2;
}
// Whether a run takes the wide kernel, from the knobs pass_cols and cluster (0 = unset) and the warpgroups
// it runs with: asked for cluster mode, the default keeps the narrower passes that mode is compiled for.
constexpr bool wide_of(int d, bool acc_f16, int wgs, int pass_cols, int cluster_knob) {
  return pass_cols == 0 ? cluster_knob != 2 && wide_by_default(d, acc_f16, wgs)
                        : pass_cols == wide_pass_cols(acc_f16);
}

constexpr int smem_bytes(int d, bool q_resident, int wgs, int bc = kBc) {
  return kAlignSlack + (q_resident ? chunks_of(d) * q_tile_bytes(wgs) : 0) +
         ring_slots(wgs, q_resident) * slot_bytes(wgs, q_resident, bc);
}
// The most any head dim needs from each compiled kernel (its shared-memory opt-in).
constexpr int max_smem_bytes(bool q_resident, int wgs, int bc = kBc) {
  return smem_bytes(q_resident ? max_resident_head_dim(bc) : kMaxHeadDim, q_resident, wgs, bc);
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
constexpr bool q_resident_by_default(int d, int wgs, int smem_limit, int bc = kBc) {
  return wgs == 2 && d <= max_resident_head_dim(bc) && smem_bytes(d, true, wgs, bc) <= smem_limit;
}

}  // namespace attn::ffpa_wgmma
