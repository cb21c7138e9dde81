// ffpa.wgmma shape: what a CTA holds, how D is cut into passes, and the shared memory that takes.
// Host and device constexpr, shared by the kernel, the launch and the tests.
//
// A CTA is two warpgroups of 64 query rows (Br = 128) over key tiles of Bc = 128, with D streamed
// in 64-column chunks (one 128-byte swizzle atom a row) through a ring of shared-memory slots.
// Each warpgroup keeps its rows' S (64 x 128) and its O columns in registers. O bounds the columns
// one CTA can produce: 64 rows x 256 fp32 or 512 fp16 columns is 128 registers a thread. Wider D
// is split into passes over O's columns, each its own CTA that recomputes S: 1.5x the QK work at
// two passes, which wgmma's rate pays for; shared memory stays constant in D with Q streamed.
#pragma once
#include <string>

namespace attn::ffpa_wgmma {

inline constexpr int kBr = 128;
inline constexpr int kBc = 128;
inline constexpr int kChunk = 64;                   // D columns per streamed item
inline constexpr int kThreads = 256;                // two warpgroups
inline constexpr int kTileBytes = 128 * kChunk * 2;  // one chunk of 128 rows: 16 KiB
inline constexpr int kAlignSlack = 1024;            // the swizzle needs 1024-byte aligned tiles
inline constexpr int kRingResident = 5;             // slots of one K or V chunk, Q resident
inline constexpr int kRingStreamed = 6;             // slots of a Q+K chunk pair (or one V chunk)
inline constexpr int kMinHeadDim = 32;
inline constexpr int kMaxHeadDim = 1024;

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

constexpr int smem_bytes(int d, bool q_resident) {
  return kAlignSlack + (q_resident ? (chunks_of(d) + kRingResident) * kTileBytes : kRingStreamed * 2 * kTileBytes);
}
// The compiled kernels' opt-in sizes: the largest D a resident Q serves, and the streamed ring.
inline constexpr int kMaxResidentHeadDim = 576;
inline constexpr int kSmemResident = smem_bytes(kMaxResidentHeadDim, true);  // 225 KiB
inline constexpr int kSmemStreamed = smem_bytes(kMaxHeadDim, false);         // 193 KiB

// Q stays in shared memory (loaded once, a third less L2 traffic) where it fits beside the ring.
constexpr bool q_resident_by_default(int d, int smem_limit) {
  return d <= kMaxResidentHeadDim && smem_bytes(d, true) <= smem_limit;
}

inline std::string describe(int d, bool acc_f16, bool q_resident) {
  const int passes = passes_of(d, acc_f16);
  return "Br 128 (2 warpgroups) x Bc 128, 64-column chunks, Q " +
         std::string(q_resident ? "resident" : "streamed with K") + ", " + std::to_string(passes) +
         (passes == 1 ? " pass" : " passes") + " over O's columns (at most " +
         std::to_string(max_pass_cols(acc_f16)) + " a pass)";
}

}  // namespace attn::ffpa_wgmma
