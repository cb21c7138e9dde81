// ffpa.wgmma shape: what a CTA holds, how D is cut into passes, and the shared memory that takes.
// Host and device constexpr, shared by the kernel, the launch and the tests.
//
// A CTA is one or two warpgroups of 64 query rows over key tiles of Bc = 128, with D streamed
// in 64-column chunks (one 128-byte swizzle atom a row) through a ring of shared-memory slots.
// Each warpgroup keeps its rows' S (64 x 128) and its O columns in registers. O bounds the columns
// one CTA can produce: 64 rows x 256 fp32 or 512 fp16 columns is 128 registers a thread. Wider D
// is split into passes over O's columns, each its own CTA that recomputes S: 1.5x the QK work at
// two passes, which wgmma's rate pays for; shared memory stays constant in D with Q streamed.
#pragma once

namespace attn::ffpa_wgmma {

inline constexpr int kBc = 128;
inline constexpr int kChunk = 64;               // D columns per streamed item
inline constexpr int kKvTileBytes = 128 * 128;  // one chunk of 128 keys: 16 KiB
inline constexpr int kAlignSlack = 1024;        // the swizzle needs 1024-byte aligned tiles
inline constexpr int kMinHeadDim = 32;
inline constexpr int kMaxHeadDim = 1024;
inline constexpr int kMaxResidentHeadDim = 576;  // the largest D whose resident Q fits beside the ring

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
constexpr int slot_bytes(int wgs, bool q_resident) {
  return q_resident ? kKvTileBytes : q_tile_bytes(wgs) + kKvTileBytes;
}

constexpr bool is_supported_head_dim(int d) { return d >= kMinHeadDim && d <= kMaxHeadDim && d % 32 == 0; }
constexpr int max_pass_cols(bool acc_f16) { return acc_f16 ? 512 : 256; }
constexpr int chunks_of(int d) { return (d + kChunk - 1) / kChunk; }
constexpr int passes_of(int d, bool acc_f16) {
  return (d + max_pass_cols(acc_f16) - 1) / max_pass_cols(acc_f16);
}
// Chunks of O a pass owns (the last pass may own fewer): the passes split D as evenly as chunks allow.
constexpr int pass_chunks(int d, bool acc_f16) {
  return (chunks_of(d) + passes_of(d, acc_f16) - 1) / passes_of(d, acc_f16);
}

constexpr int smem_bytes(int d, bool q_resident, int wgs) {
  return kAlignSlack + (q_resident ? chunks_of(d) * q_tile_bytes(wgs) : 0) +
         ring_slots(wgs, q_resident) * slot_bytes(wgs, q_resident);
}
// The most any head dim needs from each compiled kernel (its shared-memory opt-in).
constexpr int max_smem_bytes(bool q_resident, int wgs) {
  return smem_bytes(q_resident ? kMaxResidentHeadDim : kMaxHeadDim, q_resident, wgs);
}

// Q stays in shared memory (loaded once, a third less L2 traffic) where it fits beside the ring;
// only the two-warpgroup CTA keeps it (one warpgroup's CTA shares the SM with a second).
constexpr bool q_resident_by_default(int d, int wgs, int smem_limit) {
  return wgs == 2 && d <= kMaxResidentHeadDim && smem_bytes(d, true, wgs) <= smem_limit;
}

}  // namespace attn::ffpa_wgmma
