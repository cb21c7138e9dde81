// ffpa.wgmma shape: what a CTA holds, how D is cut into passes, and the shared memory that takes.
// Host and device constexpr, shared by the kernel, the launch and the tests.
//
// A CTA is one or two warpgroups over key tiles of Bc = 128, with D streamed in 64-column chunks (one
// 128-byte swizzle atom a row) through a ring of shared-memory slots. Each warpgroup keeps its rows' S
// and its O columns in registers. O bounds the columns one warpgroup can produce: 64 rows x 256 fp32 or
// 512 fp16 columns is 128 registers a thread. The kernel's forms (Form) differ in how the warpgroups
// and the CTAs of a row block cover the rows and O's columns:
// - passes: each warpgroup 64 rows of its own; wider D is split into passes over O's columns, each its
//   own CTA that recomputes S (1.5x the QK work at two passes); shared memory constant in D with Q
//   streamed;
// - wide: the same with a quarter more columns a pass (acc_f16 640, acc_f32 320: 160 registers) on
//   narrower key tiles (S, its fp32 copy and P shrink by the registers O grows);
// - cluster: the passes of a row block one thread-block cluster sharing S (below);
// - split: both warpgroups over the same 64 rows, each forming a partial S over its half of D's chunks
//   and owning half of the pass's O columns, the partial S added through shared memory every tile, so
//   one CTA produces twice the columns without recomputing S (below).
#pragma once
#include "kernels/common/smem_optin.hpp"

namespace attn::ffpa_wgmma {

inline constexpr int kBc = 128;
inline constexpr int kChunk = 64;         // D columns per streamed item
inline constexpr int kAlignSlack = 1024;  // the swizzle needs 1024-byte aligned tiles
// The mbarriers the TMA loads complete on: one a ring slot (at most 6) and Q's.
inline constexpr int kBarrierBytes = 64;
inline constexpr int kMinHeadDim = 32;
inline constexpr int kMaxHeadDim = 1024;

enum class Form : int { passes, wide, cluster, split };
constexpr const char* form_name(Form f) {
  return f == Form::passes ? "passes" : f == Form::wide ? "wide" : f == Form::cluster ? "cluster" : "split";
}
// The wide kernels: O's columns a pass grow by a quarter (acc_f16 640 fp16, acc_f32 320 fp32: 160
// registers a thread), which fits beside S only on narrower key tiles: with 128-key tiles ptxas
// spills (acc_f16: S 32 + its fp32 copy 64 + P 32 beside O), with 96 keys (acc_f16) or 64 (acc_f32,
// whose S is fp32) it does not.
constexpr int wide_pass_cols(bool acc_f16) { return acc_f16 ? 640 : 320; }
constexpr int wide_bc(bool acc_f16) { return acc_f16 ? 96 : 64; }

// The split form: a warpgroup owns up to 512 fp16 or 320 fp32 columns of O (the passes' and the wide
// kernels' register budgets) on 64-key tiles, whose S is small enough that both warpgroups' partials
// (8 or 16 KiB each) and a chunk for each warpgroup a slot fit beside Q resident at every D.
inline constexpr int kSplitBc = 64;
constexpr int split_wg_cols(bool acc_f16) { return acc_f16 ? 512 : 320; }

constexpr int bc_of(Form f, bool acc_f16) {
  return f == Form::wide ? wide_bc(acc_f16) : f == Form::split ? kSplitBc : kBc;
}

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
  const int room = static_cast<int>(smem::kSm90Optin) - kAlignSlack - kBarrierBytes -
                   ring_slots(2, true) * slot_bytes(2, true, bc);
  const int d = room / q_tile_bytes(2) * kChunk;
  return d < kMaxHeadDim ? d : kMaxHeadDim;
}
inline constexpr int kMaxResidentHeadDim = max_resident_head_dim();
static_assert(kMaxResidentHeadDim == 576, "docs/kernels/ffpa.md states Q resident up to D 576");

constexpr bool is_supported_head_dim(int d) { return d >= kMinHeadDim && d <= kMaxHeadDim && d % 32 == 0; }
// O's columns a CTA produces (a pass) in each form.
constexpr int max_pass_cols(bool acc_f16, Form f = Form::passes) {
  return f == Form::wide    ? wide_pass_cols(acc_f16)
         : f == Form::split ? 2 * split_wg_cols(acc_f16)
         : acc_f16          ? 512
                            : 256;
}
constexpr int chunks_of(int d) { return (d + kChunk - 1) / kChunk; }
constexpr int passes_of(int d, bool acc_f16, Form f = Form::passes) {
  return (d + max_pass_cols(acc_f16, f) - 1) / max_pass_cols(acc_f16, f);
}
// Chunks of O a pass owns (the last pass may own fewer): the passes split D as evenly as chunks allow.
constexpr int pass_chunks(int d, bool acc_f16, Form f = Form::passes) {
  return (chunks_of(d) + passes_of(d, acc_f16, f) - 1) / passes_of(d, acc_f16, f);
}
// The wide kernel by default where it saves a pass and runs at most two, with two warpgroups.
// Measured (H200, B 1 H 48 S 8192 fp16, docs/PERF.md "ffpa.wgmma in one pass more": full mask,
// TFLOPS, cublas.unfused 234-377 in the same runs):
//   acc_f16 D 544 / 576 / 608 / 640: 479 / 512 / 490 / 528 against 331 / 350 / 303 / 335 in two passes;
//   acc_f32 D 288 / 320: 355 / 401 against 287 / 322 (one pass against two); D 576 / 640: 286 / 291
//   against 268 / 234 (two against three); D 832-960: 182-188 against 189-191 (three against four: the
//   64-key tiles cost more than the fourth pass, so not the default there).
constexpr bool wide_by_default(int d, bool acc_f16, int wgs) {
  return wgs == 2 && passes_of(d, acc_f16, Form::wide) < passes_of(d, acc_f16) &&
         passes_of(d, acc_f16, Form::wide) <= 2;
}

constexpr int smem_bytes(int d, bool q_resident, int wgs, int bc = kBc) {
  return kAlignSlack + kBarrierBytes + (q_resident ? chunks_of(d) * q_tile_bytes(wgs) : 0) +
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
// The default for acc_f16 wherever it needs two passes (D 672 up; to 640 the wide kernel runs one), with
// the tile before's P V under the exchange (ffpa_wgmma_kernel.cuh). Measured (H200, B 1 H 48 S 8192 fp16,
// 300 ms cool-downs, docs/PERF.md "ffpa.wgmma cluster mode with the exchange under the tile before's P V";
// TFLOPS, cluster against recomputing, two rounds): full D 704 410.5 / 376.1 and 410.1 / 367.2, D 768
// 432.7 / 391.1 and 433.9 / 392.6, D 832 429.5 / 381.2 and 427.5 / 378.3, D 1024 456.2 / 403.3 and 453.6 /
// 405.8; causal 1.08-1.18x; D 672 388.7 / 351.1 (one round). The exchange
// with nothing under it (the binary before, same call) was 2-5% slower than recomputing at D 704-768 and
// 1-10% faster from 832. acc_f32 (no room beside O for the tile before's P and S: the exchange stalls
// both warpgroups) slower at every D (D 1024 202.7 / 237.1 with TMA loads, 2026-11-28; with cp.async on
// the H100 25-50% slower).
constexpr bool cluster_by_default(int d, bool acc_f16) { return acc_f16 && d > wide_pass_cols(acc_f16); }
// Two barriers, a scatter buffer of (C - 1) x ceil(G / C) groups a thread and a stage buffer of G.
constexpr int exchange_bytes(int d, bool acc_f16) {
  const int groups = acc_f16 ? 8 : 16, ranks = passes_of(d, acc_f16), group_bytes = threads_of(2) * 16;
  return 16 + (ranks - 1) * ((groups + ranks - 1) / ranks) * group_bytes + groups * group_bytes;
}
// The ring beside Q and the exchange buffers: as many slots as fit in sm_90's shared memory, up to the
// usual 5 (Q resident) or 6; 0 where not even 3 fit (two items loading while one is computed need 4).
constexpr int cluster_ring_slots(int d, bool acc_f16, bool q_resident) {
  const int fixed = kAlignSlack + kBarrierBytes +
                    (q_resident ? pass_chunks(d, acc_f16) * q_tile_bytes(2) : 0) + exchange_bytes(d, acc_f16);
  const int fit = (static_cast<int>(smem::kSm90Optin) - fixed) / slot_bytes(2, q_resident);
  const int slots = fit < ring_slots(2, q_resident) ? fit : ring_slots(2, q_resident);
  return slots >= 3 ? slots : 0;
}
constexpr int cluster_smem_bytes(int d, bool acc_f16, bool q_resident) {
  return kAlignSlack + kBarrierBytes + (q_resident ? pass_chunks(d, acc_f16) * q_tile_bytes(2) : 0) +
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

// The split form (two warpgroups over 64 rows, Q resident): a slot holds one 64-key chunk for each
// warpgroup; after the ring, both warpgroups' partial S (64 x 64 fp16 or fp32 each), which each adds to
// the other's. The ring takes what is left, up to 6 slots; it needs 4 (two items loading while one is
// computed and the one before still read by its wgmmas), which leaves room at every D to 1024.
constexpr int split_slot_bytes() { return 2 * kSplitBc * 128; }
constexpr int split_exchange_bytes(bool acc_f16) { return 2 * 64 * kSplitBc * (acc_f16 ? 2 : 4); }
// Everything but the ring: alignment, barriers, Q and the exchange.
constexpr int split_fixed_bytes(int d, bool acc_f16) {
  return kAlignSlack + kBarrierBytes + chunks_of(d) * q_tile_bytes(1) + split_exchange_bytes(acc_f16);
}
constexpr int split_ring_slots(int d, bool acc_f16) {
  const int fit = (static_cast<int>(smem::kSm90Optin) - split_fixed_bytes(d, acc_f16)) / split_slot_bytes();
  const int slots = fit < 6 ? fit : 6;
  return slots >= 4 ? slots : 0;
}
constexpr int split_smem_bytes(int d, bool acc_f16) {
  return split_fixed_bytes(d, acc_f16) + split_ring_slots(d, acc_f16) * split_slot_bytes();
}
// Each warpgroup needs a chunk of its own to contract over: D above one chunk.
constexpr bool split_fits(int d, bool acc_f16) {
  return chunks_of(d) >= 2 && split_ring_slots(d, acc_f16) >= 4;
}
// Where the split form is the default: acc_f32 at D 544-640, where it runs one pass and the rows' forms
// two. Measured (H200, B 1 H 48 S 8192 fp16, TMA loads, docs/PERF.md "ffpa.wgmma's loads by TMA"; TFLOPS,
// full mask, split against rows): acc_f32 D 576 312.8 against 311.0, D 640 339.6 against 317.2 (causal
// 310.6 / 306.7, 334.5 / 307.4); slower everywhere else: acc_f32 D 384 292 against 369, D 704-1024
// 207-231 against 222-292 (two passes each, the rows' passes with 128 rows share K and V over twice the
// rows); acc_f16 0.78-0.91 of the rows' forms at every D (D 1024 367 against 406). Its 64-row CTAs move
// twice the K and V bytes a FLOP of the 128-row ones, and 64-key tiles halve the work an item.
constexpr bool split_by_default(int d, bool acc_f16, int wgs) {
  return wgs == 2 && !acc_f16 && d > 512 && d <= 2 * split_wg_cols(acc_f16) && split_fits(d, acc_f16);
}

// The knobs that choose the form (0 = unset).
struct FormKnobs {
  int pass_cols = 0;
  int cluster = 0;
  int split_d = 0;
  int q_stream = 0;
};
// The form a run takes from the knobs and the warpgroups it runs with. A knob that asks for another
// form's shape (pass_cols, cluster = 2, Q streamed) keeps that form; the default takes the split form
// where split_by_default, else the wide kernel where it saves a pass, else cluster mode where
// cluster_by_default.
constexpr Form form_of(int d, bool acc_f16, int wgs, FormKnobs k) {
  if (k.split_d == 2) return Form::split;
  if (k.split_d == 0 && k.pass_cols == 0 && k.cluster == 0 && k.q_stream == 0 &&
      split_by_default(d, acc_f16, wgs))
    return Form::split;
  const bool wide = k.pass_cols == 0 ? k.cluster != 2 && wide_by_default(d, acc_f16, wgs)
                                     : k.pass_cols == wide_pass_cols(acc_f16);
  if (wide) return Form::wide;
  if (passes_of(d, acc_f16) > 1 && wgs == 2 &&
      (k.cluster == 0 ? cluster_by_default(d, acc_f16) : k.cluster == 2))
    return Form::cluster;
  return Form::passes;
}

}  // namespace attn::ffpa_wgmma
