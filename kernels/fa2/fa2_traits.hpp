// fa2.mma tile traits: which (Br, Bc, warps) tiles are compiled per head dim, and the default
// choice per (D, dtype, causal, arch) with the reason for each branch. Host-only (constexpr), so
// the registry, the tests and the kernels agree on the same list.
#pragma once
#include <array>
#include <span>
#include <string>

#include "kernels/api/dtype.hpp"

namespace attn::fa2 {

struct TileConfig {
  int br = 0;     // query rows per CTA
  int bc = 0;     // keys per K/V tile
  int warps = 0;  // each warp owns br / warps query rows (16 or 32)
  int stages =
      0;  // K buffers: 1 = FA2 order (K_{j-1} loads after QK_j), 2 = K_{j-1} loads during all of tile j
  friend constexpr bool operator==(const TileConfig&, const TileConfig&) = default;
};

// Head dims compiled (D == Dv).
inline constexpr std::array<int, 8> kHeadDims = {32, 64, 96, 128, 160, 192, 224, 256};

constexpr bool is_compiled_head_dim(int d) {
  for (int x : kHeadDims)
    if (x == d) return true;
  return false;
}

// m16 tiles a warp's query rows make (1 or 2).
constexpr int m_tiles(const TileConfig& t) { return t.br / t.warps / 16; }

// A tile whose S (all Bc keys) and O together take 192 or more of a thread's registers with O at 128
// or more (D = 128 at Bc = 64): its row sums live in shared memory and it is compiled without the
// band mask, which ptxas cannot fit in 255 registers beside them.
constexpr bool is_tight(int d, const TileConfig& t) {
  return m_tiles(t) * (t.bc + d) / 2 >= 192 && m_tiles(t) * d / 2 >= 128;
}

// Shared-memory rows. D a multiple of 64 (whole 128-byte lines a row): unpadded, the 16-byte chunks
// of each line XOR-swizzled by row % 8, so a warp's cp.async of a global line fills one smem line and
// ldmatrix's 8 rows still hit distinct banks. Padded rows (8 more elements) split each line's copy
// over two smem lines: at D=256 that made 3x the L2 requests and 1.7x the L2 sectors of PyTorch's FA2
// on the same tile (ncu, v10). D = 32/96/160/224 keep the padding (their rows are not whole lines),
// and so does the tight tile: its per-step address XORs spill it on sm_80/89 (12 bytes, v12).
constexpr bool is_swizzled(int d, const TileConfig& t) { return d % 64 == 0 && !is_tight(d, t); }
constexpr int smem_row_elems(int d, const TileConfig& t) { return is_swizzled(d, t) ? d : d + 8; }
// Physical 16-byte chunk of logical chunk c in tile row r.
constexpr int smem_chunk(bool swizzled, int r, int c) { return swizzled ? c ^ (r & 7) : c; }

// Shared memory of one CTA [bytes], the one count the kernel and the fit checks share: Q [br] +
// stages x K [bc] + V [bc] rows; a tight tile adds every thread's running row sums, 2 per m16 tile
// (4 words a query row: each thread of a row's quad keeps its own).
constexpr int smem_bytes(int d, const TileConfig& t) {
  return (t.br + (t.stages + 1) * t.bc) * smem_row_elems(d, t) * 2 +
         (is_tight(d, t) ? t.warps * 32 * 2 * m_tiles(t) * 4 : 0);
}

// The tiles compiled per head dim: the default first, then alternatives kept for measurement.
// Numbers: fa2.mma tile test, B*S = 16384, H = 2048/D, S = 4096, fp16, TFLOPS full / causal, H100,
// 2026-11-22 at the time named (docs/PERF.md "fa2.mma" has every version).
// D <= 128: 4 warps x 32 rows; a thread holds O in D fp32 registers and S in kSub registers.
inline constexpr TileConfig kTilesD32[] = {{128, 128, 4, 2}};
// D=64 (tile test of the final code, 20:19 UTC): 128x128 s2 349.0 / 316.9 (S for all 128 keys, Q read
// once a tile); 128x64 s1 322.6 / 292.1.
inline constexpr TileConfig kTilesD64[] = {{128, 128, 4, 2}, {128, 64, 4, 1}};
inline constexpr TileConfig kTilesD96[] = {{128, 64, 4, 2}};
// D=128 (20:19 UTC): 128x64 s2 378.5 (tight: compiled without the band mask, so no causal figure);
// 128x32 s2 362.4 / 310.7, the default with a band; 128x128x8w s2 331.4 / 302.6 (16 rows a warp:
// twice the ldmatrix bytes per mma).
inline constexpr TileConfig kTilesD128[] = {{128, 64, 4, 2}, {128, 32, 4, 2}, {128, 128, 8, 2}};
// D >= 160: 8 warps x 16 rows (32 rows of D >= 160 would need >= 160 O registers a thread).
inline constexpr TileConfig kTilesD160[] = {{128, 64, 8, 2}};
inline constexpr TileConfig kTilesD192[] = {{128, 64, 8, 2}};
inline constexpr TileConfig kTilesD224[] = {{128, 64, 8, 2}};
// D=256 (16 rows a warp: O alone is 128 registers; 20:19 UTC): 64x64x4w s1 344.9 / 303.2 (two 96 KiB
// CTAs an SM); 128x64x8w s2 330.0 / 283.6 (one CTA); 128x32x8w s2 274.5 / 235.0.
inline constexpr TileConfig kTilesD256[] = {{64, 64, 4, 1}, {128, 64, 8, 2}, {128, 32, 8, 2}};

constexpr std::span<const TileConfig> compiled_tiles(int d) {
  switch (d) {
    case 32:
      return kTilesD32;
    case 64:
      return kTilesD64;
    case 96:
      return kTilesD96;
    case 128:
      return kTilesD128;
    case 160:
      return kTilesD160;
    case 192:
      return kTilesD192;
    case 224:
      return kTilesD224;
    case 256:
      return kTilesD256;
    default:
      return {};
  }
}

struct TileChoice {
  TileConfig tiles;
  const char* reason;
};

// Default tiles per (D, dtype, band, arch). `sm` is major * 10 + minor; `smem_optin` the
// per-block shared-memory limit [bytes]. `band`: causal or windowed (the band mask is compiled in),
// which the tight tiles do not take. dtype does not change the choice: fp16 and bf16 run the same
// instructions at the same rate.
constexpr TileChoice default_tiles(int d, DType /*dtype*/, bool band, [[maybe_unused]] int sm,
                                   int smem_optin) {
  const auto first = compiled_tiles(d);
  if (first.empty()) return {{}, "head dim not compiled"};
  TileConfig t = first[0];
  if (band && is_tight(d, t)) {
    for (const TileConfig& alt : first)
      if (!is_tight(d, alt)) {
        t = alt;
        break;
      }
    if (smem_bytes(d, t) <= smem_optin)
      return {t,
              "D=128 with the band mask: 128x32, 4 warps x 32 rows, 2 K buffers (128x64 is compiled without "
              "the mask: S, O and the band's state do not fit 255 registers)"};
  }
  if (smem_bytes(d, t) > smem_optin) {
    // sm_86/89 (99 KiB a block): the D >= 192 tiles with Bc=64 do not fit; the smallest compiled one
    // does (the caller checks it again).
    for (const TileConfig& alt : first)
      if (smem_bytes(d, alt) <= smem_optin && !(band && is_tight(d, alt)))
        return {alt, "default tiles exceed this GPU's shared memory"};
    return {t, "no compiled tile fits this GPU's shared memory"};
  }
  // 32 rows a warp where O fits (D <= 128): each K/V fragment read from smem feeds two m-tiles, which
  // keeps ldmatrix traffic under the tensor pipe's rate; 16 rows a warp reads twice as much per mma.
  if (d <= 64)
    return {t,
            "D <= 64: 128x128, 4 warps x 32 rows, 2 K buffers; S for all 128 keys, exp2 and PV in 64-key "
            "steps at D=64"};
  if (d <= 128)
    return {t,
            d == 128
                ? "D=128 without the band mask: 128x64, 4 warps x 32 rows, S for all 64 keys (Q read once a "
                  "tile), row sums in shared memory, 2 K buffers, 2 CTAs/SM (measured best)"
                : "D=96: 128x64, 4 warps x 32 rows, 2 K buffers, 2 CTAs/SM by registers"};
  if (d == 256) return {t, "D=256: 64x64, 4 warps x 16 rows, 1 K buffer: 96 KiB, so 2 CTAs/SM"};
  return {t, "D 160-224: 128x64, 8 warps x 16 rows (O is D/2 registers a thread), 2 K buffers"};
}

// The one tile per head dim compiled for varlen batches: the band default (varlen launches run the
// band kernel, whose tests follow each sequence's lengths), never a tight tile.
constexpr TileConfig varlen_tiles(int d) { return default_tiles(d, DType::fp16, true, 0, 1 << 30).tiles; }

// The one tile per head dim compiled for NSA's selected branch: 64 query rows, so that a CTA's rows
// lie in one query block of l' (a multiple of 64) and share one list of selected key blocks, and 64
// keys a tile, so that each tile lies in one key block. 4 warps x 16 rows; D = 256 keeps its one K
// buffer (96 KiB, 2 CTAs an SM).
inline constexpr int kSelectRows = 64;
constexpr TileConfig select_tiles(int d) {
  return d == 256 ? TileConfig{64, 64, 4, 1} : TileConfig{64, 64, 4, 2};
}
// Key tiles a selected-branch CTA may visit at most (its visit list in shared memory).
inline constexpr int kMaxSelectTiles = 4096;
constexpr int select_list_bytes(int tiles) { return (tiles * 4 + 15) / 16 * 16; }

inline std::string to_string(const TileConfig& t) {
  std::string s = std::to_string(t.br);
  s += 'x';
  s += std::to_string(t.bc);
  s += 'x';
  s += std::to_string(t.warps);
  s += "w s";
  s += std::to_string(t.stages);
  return s;
}

}  // namespace attn::fa2
