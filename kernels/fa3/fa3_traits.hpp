// fa3.wgmma shape: the CTA (a producer warpgroup and two consumer warpgroups of 64 query rows), the key
// tile and the K/V ring per head dim, and the shared memory they take. Host and device constexpr,
// shared by the kernel, the launch, the registry entry and the tests.
//
// Q (128 rows) stays in shared memory for the CTA's life; K and V tiles of bn keys stream through a
// ring of `stages` slots each, every slot D / 64 TMA boxes of [rows][64 columns] in the 128-byte
// swizzle wgmma reads. Each consumer warpgroup keeps its 64 rows' O (64 x D fp32: D / 2 registers a
// thread), S (64 x bn: bn / 2) and two P fragments (this tile's and the previous one's, bn / 4 each)
// in registers, which bounds bn: 128 at D <= 128, 64 at D = 256 (O alone is 128 registers there).
#pragma once

namespace attn::fa3 {

inline constexpr int kBlockM = 128;     // query rows a CTA: two consumer warpgroups of 64
inline constexpr int kConsumerWarpgroups = 2;
inline constexpr int kThreads = 128 * (1 + kConsumerWarpgroups);
inline constexpr int kChunk = 64;       // columns per TMA box and swizzle atom (128 bytes of 16-bit)
inline constexpr int kAlignSlack = 1024;  // the 128-byte swizzle needs 1024-byte aligned tiles
// Registers a thread after setmaxnreg: the producer gives up what the consumers take
// (128 x 24 + 256 x 240 = 64512 of the SM's 65536).
inline constexpr int kProducerRegs = 24;
inline constexpr int kConsumerRegs = 240;
inline constexpr int kHeadDims[] = {64, 128, 256};

constexpr bool is_supported_head_dim(int d) { return d == 64 || d == 128 || d == 256; }

struct Tile {
  int bn = 128;    // keys a tile
  int stages = 2;  // K/V ring slots
};
constexpr bool operator==(const Tile& a, const Tile& b) { return a.bn == b.bn && a.stages == b.stages; }

// The compiled tile per head dim (the default). Why these:
//   D=64:  bn 128, 3 stages: S and O take 64 + 32 registers, so the widest tile fits; a third slot
//          (48 KiB in all) keeps TMA two tiles ahead of a loop that is short per tile.
//   D=128: bn 128, 2 stages: O 64 + S 64 + P 2 x 32 registers; 160 KiB of shared memory.
//   D=256: bn 64, 2 stages: O is 128 registers, S 32; Q 64 KiB + 4 slots of 32 KiB = 192 KiB.
constexpr Tile default_tile(int d) { return d == 64 ? Tile{128, 3} : d == 128 ? Tile{128, 2} : Tile{64, 2}; }

constexpr int q_bytes(int d) { return kBlockM * d * 2; }
constexpr int kv_slot_bytes(int d, int bn) { return bn * d * 2; }
// Q full, then per stage: K full, V full, K empty, V empty (8 bytes each).
constexpr int barrier_bytes(int stages) { return 8 * (1 + 4 * stages); }
constexpr int smem_bytes(int d, const Tile& t) {
  return kAlignSlack + q_bytes(d) + 2 * t.stages * kv_slot_bytes(d, t.bn) + barrier_bytes(t.stages);
}

}  // namespace attn::fa3
