// fa3.wgmma shape: the CTA (a producer warpgroup and 2 or 3 consumer warpgroups of 64 query rows), the
// key tile and the K/V ring per head dim, and the shared memory and registers they take. Host and
// device constexpr, shared by the kernel, the launch, the registry entry and the tests.
//
// Q (64 rows a consumer warpgroup) stays in shared memory for the tile; K and V tiles of bn keys
// stream through a ring of `stages` slots each, every slot D / 64 TMA boxes of [rows][64 columns] in
// the 128-byte swizzle wgmma reads. Each consumer warpgroup keeps its 64 rows' O (64 x D fp32: D / 2
// registers a thread), S (bn / 2) and P (bn / 4) in registers, which bounds bn by the registers a
// consumer thread gets after setmaxnreg: 232 with two consumer warpgroups, 160 with three.
#pragma once
#include <span>

namespace attn::fa3 {

inline constexpr int kChunk = 64;         // columns per TMA box and swizzle atom (128 bytes of 16-bit)
inline constexpr int kAlignSlack = 1024;  // the 128-byte swizzle needs 1024-byte aligned tiles
inline constexpr int kHeadDims[] = {64, 128, 256};

constexpr bool is_supported_head_dim(int d) { return d == 64 || d == 128 || d == 256; }

struct Tile {
  int bn = 128;       // keys a tile
  int stages = 2;     // K/V ring slots
  int wgs = 2;        // consumer warpgroups (64 query rows each)
  int cluster = 1;    // CTAs a cluster: 2 = adjacent row blocks sharing each K/V tile by TMA multicast
  int q_buffers = 1;  // Q buffers: 2 = the next item's Q loads while this item still reads its own
  // The epilogue: O through a shared-memory tile and TMA stores (one a warpgroup's 64-column chunk)
  // instead of stores from registers.
  bool tma_store = false;
};
constexpr bool operator==(const Tile& a, const Tile& b) {
  return a.bn == b.bn && a.stages == b.stages && a.wgs == b.wgs && a.cluster == b.cluster &&
         a.q_buffers == b.q_buffers && a.tma_store == b.tma_store;
}

constexpr int rows_of(const Tile& t) { return 64 * t.wgs; }
constexpr int threads_of(const Tile& t) { return 128 * (1 + t.wgs); }
// Registers a thread after setmaxnreg: the producer gives up what the consumers take
// (2 consumers: 128 x 40 + 256 x 232 = 64512; 3: 128 x 32 + 384 x 160 = 65536 of the SM's 65536).
// The producer's loop (work draw, key range, ring position) spills below 40 with two consumers.
constexpr int producer_regs(const Tile& t) { return t.wgs == 2 ? 40 : 32; }
constexpr int consumer_regs(const Tile& t) { return t.wgs == 2 ? 232 : 160; }

// The compiled tiles per head dim; the knobs bn, warpgroups, cluster, q_buffers and epilogue pick one
// (0 = the default below). A cluster of 2 takes a full mask only (both row blocks must visit the same key
// tiles).
inline constexpr Tile kTiles64[] = {
    {128, 3, 3, 1, 2}, {128, 3, 3, 1}, {128, 3, 2, 1}, {128, 3, 3, 1, 2, true}};
inline constexpr Tile kTiles128[] = {{176, 2, 2, 2},         {128, 2, 2, 2, 2, true}, {128, 2, 2, 1, 2},
                                     {176, 2, 2, 1},         {128, 2, 2, 1},          {128, 2, 2, 2, 2},
                                     {128, 2, 2, 1, 2, true}};
inline constexpr Tile kTiles256[] = {{80, 2, 2, 2}, {80, 2, 2, 1}, {64, 2, 2, 1}};

template <int D>
constexpr const auto& tiles_of() {
  if constexpr (D == 64)
    return kTiles64;
  else if constexpr (D == 128)
    return kTiles128;
  else
    return kTiles256;
}
// The same list for a head dim known at run time (D 256 for any other: is_supported_head_dim first).
constexpr std::span<const Tile> compiled_tiles(int d) {
  if (d == 64) return tiles_of<64>();
  if (d == 128) return tiles_of<128>();
  return tiles_of<256>();
}

// Key ranges from this long up take D=128's widest tile without a band (below, the narrower one).
inline constexpr int kLongKeys = 4096;

// Why the defaults (measured on the H100, docs/PERF.md "fa3.wgmma"):
//   D=64: 192 rows (three consumer warpgroups), bn 128, 3 stages: at D=64 the exponentials cost as
//         much as both GEMMs, so a third warpgroup keeps the tensor cores fed while two do softmax;
//         S 64 + O 32 + P 32 registers fit the 160 three consumers get.
//   D=128: bn 176 without a band from kLongKeys keys up: a wider tile halves the per-tile cost of the
//         row reductions and the barrier hand-offs. With a band (causal, windows), or fewer keys, bn
//         128: a band's diagonal tiles waste less, and at S 2048 bn 176 pads 2048 keys to 2112 while
//         the item's fixed cost weighs more (bn 128 with two Q buffers +2% at S 2048, -2% at 8192).
//         O 64 + S 88 + P 44 registers of 232.
//   D=256: bn 80, 2 stages: O alone is 128 registers; Q 64 KiB + 4 slots of 40 KiB = 224 KiB.
//   D=128 and 256 without a band: clusters of 2, each CTA loading half of every K/V tile for both.
//         Without it fa3.wgmma read twice cuDNN's bytes from L2 (8.3 GB against 3.5 GB at D=256
//         S=8192) and ran at a lower clock under the power cap at the same tensor use per cycle.
//         At D=64 a cluster ran 2-10% slower (its three warpgroups' tiles are light on L2): none.
//   Two Q buffers wherever shared memory has room (D=64; D=128 at bn 128): the producer loads the
//         next item's Q while the consumers still read this one's, so an item's first Q K^T no
//         longer waits for a load issued after the last one's. +1-2% at D=64, +2% at D=128 bn 128
//         (causal S 2048 and 8192, full S 2048). D=128 at bn 176 and D=256 have no room for a second.
//   The TMA-store epilogue (O through shared memory, one TMA store a warpgroup's 64-column chunk) on
//         D=128's bn 128 tiles, where its 32 KiB fit: clustered +2.6% at S 2048 (631-633 against
//         615-616 TFLOPS, fp16, H100; cuDNN 634-636 in the same runs); with a band +1.5-2.9% (causal
//         S 2048 548 against 533-534, S 8192 656-657 against 644-647, fp16, H200; bf16 alike). At
//         D=64 level: not the default there.
constexpr Tile default_tile(int d, bool band, int seq_kv) {
  if (d == 64) return kTiles64[0];
  if (d == 128) return band ? kTiles128[6] : seq_kv >= kLongKeys ? kTiles128[0] : kTiles128[1];
  return band ? kTiles256[1] : kTiles256[0];
}

constexpr int q_bytes(int d, const Tile& t) { return rows_of(t) * d * 2; }
constexpr int kv_slot_bytes(int d, int bn) { return bn * d * 2; }
// Per Q buffer Q full, then per Q buffer Q empty, then per stage: K full, V full, K empty, V empty (8
// bytes each), then per Q buffer the slot the producer hands that buffer's work item over in.
constexpr int barrier_bytes(const Tile& t) { return 8 * (2 * t.q_buffers + 4 * t.stages) + 8 * t.q_buffers; }
// O's staging tile for the TMA-store epilogue: as large as one Q buffer.
constexpr int o_stage_bytes(int d, const Tile& t) { return t.tma_store ? q_bytes(d, t) : 0; }
constexpr int smem_bytes(int d, const Tile& t) {
  return kAlignSlack + t.q_buffers * q_bytes(d, t) + 2 * t.stages * kv_slot_bytes(d, t.bn) +
         o_stage_bytes(d, t) + barrier_bytes(t);
}

}  // namespace attn::fa3
