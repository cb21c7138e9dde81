// ffpa.l1 tile choice: the tiles compiled per (accumulation, head-dim capacity), the default for a
// head dim with the reason, and the shared-memory footprint. Host-only constexpr, shared by the
// registry, the launch switch and the tests.
//
// What bounds the tiles is O, not shared memory: shared memory per CTA is constant in D (Q, K and
// V are streamed in chunks of columns), but O is Br x D accumulators in registers. The register
// file is 256 KiB an SM, so fp32 O at D = 1024 allows Br = 32 (128 KiB) and fp16 O allows Br = 64;
// at D <= 512 each doubles. A larger Br re-reads K and V less often (L2 traffic per flop ~ 1/Br).
#pragma once
#include <array>
#include <span>
#include <string>

namespace attn::ffpa {

inline constexpr int kMinHeadDim = 32;
inline constexpr int kMaxHeadDim = 1024;
inline constexpr std::array<int, 2> kCapacities = {512, 1024};  // head-dim capacity classes

struct FfpaTiles {
  int br = 0;          // query rows per CTA
  int bc = 0;          // keys per K/V tile
  int dmax = 0;        // head-dim capacity (O registers are sized for it)
  int warps = 0;       // 4 (two CTAs an SM) or 8
  int chunk = 0;       // D columns per streamed item: 64 or 128
  int warp_rows = 16;  // query rows a warp holds: 16 or 32 (two m16 tiles share each K/V fragment)
  friend constexpr bool operator==(const FfpaTiles&, const FfpaTiles&) = default;
};

constexpr bool is_supported_head_dim(int d) { return d >= kMinHeadDim && d <= kMaxHeadDim && d % 32 == 0; }
constexpr int capacity_for(int d) { return d <= 512 ? 512 : 1024; }

// Tiles compiled per (accumulation, capacity), each with stages 1 and 2 and Q streamed or
// resident. Measured alternatives (B=1 H=48 S=8192 fp16, stages 2, Q streamed, TFLOPS at (D=320
// or 640, D=512 or 1024), H100, 2026-11-22 11:41 and 11:45 UTC, FfpaTileTest; docs/PERF.md):
//   f32 <= 512:  64x64x8w c128 146 / 166 (chosen until v8); c64 146 / 143; 32x64x4w c128 132 / 134.
//   f32 > 512:   32x128x8w c128 141 / 144 (chosen); c64 134 / 138; 32x64x8w c128 118 / 121.
//   f16 <= 512:  64x64x4w c128 183 / 202 (chosen, 2 CTAs an SM; 32-row warps since v7); 128x64x8w c128 180 /
//   197; c64 174 / 181. f16 > 512:   64x64x8w c128 156 / 163 (chosen until v8); c64 137 / 145; 32x64x4w c128
//   132 / 133.
// Stages: 1 (one chunk in flight) costs 10-25% (the 2-CTA tile: nothing, the other CTA hides the
// load); 3 gained at most 1% (and halved the 2-CTA tile's occupancy: 113 / 127), so it is not built.
// Q resident (q_resident=1, 12:01 UTC, stages 2 / 1): f32 168 / 134, 189 / 163, 152 / 127, 158 / 126;
// f16 200 / 208, 141 / 229 (stages 2 needs 138 KiB: one CTA an SM), 175 / 158, 183 / 161.
// ncu (11:59 UTC, H=16, Q streamed): L2 throughput 79% (f16, D=512), 61% (f16, D=1024), 85% (f32,
// D=1024) of peak with the tensor pipe 22-31% active. With Q resident (13:57 UTC, H=48) L2 falls to
// 32-40% while the tensor pipe stays at 27-34%: the warps wait on ldmatrix results and on MMA
// dependencies (2 warps a scheduler), and shared-memory wavefronts run at 48-53% of peak.
// 32 rows a warp (r32: two m16 tiles share every K/V fragment, O's columns split over twice the
// warps), same-call A/B on 14:11 UTC (old 16-row / r32, TFLOPS at D = 320 / 512, stages 2; Q resident):
//   f16 <= 512: 183.9 / 201.7 -> 191.7 / 214.9; q_resident stages 1: 206.6 / 227.4 -> 214.8 / 248.3.
//   f32 <= 512: 146.9 / 164.6 -> 156.9 / 175.5; q_resident: 167.1 / 187.7 -> 176.7 / 200.5.
//   f16 > 512 (64x64x8w, D = 640 / 1024): 154.7 / 161.4 -> 153.5 / 163.6, q_resident 173.5 / 181.3 ->
//   171.5 / 183.2: no gain at 255 registers, so 16 rows kept. f32 > 512 (Br = 32) has no r32 form
//   with its P held in 64 registers.
// Bc = 128 (session 3, 14:40 UTC, same call, TFLOPS at D = 320 or 640 / 512 or 1024, stages 2; Q resident):
//   f16 > 512, 64x64x8w -> 64x128x8w: 154.9 / 162.8 -> 202.0 / 209.4; Q resident 172.3 / 180.9 (stages 2) ->
//   218.2 / 227.1 (stages 1; stages 2 needs 256 KiB at D = 1024). Half the tiles: half the fp16 folds of
//   P V into O and the cross-warp softmax barriers a key, and 64 keys a warp in QK.
//   f32 <= 512, 64x64x8w r32 -> 64x128x8w (16 rows, 255 registers): 153.8 / 175.2 -> 188.2 / 209.1;
//   Q resident 174.6 / 201.1 -> 203.0 / 225.3. (64x128 with 32 rows spills.)
//   f16 <= 512: 64x128x8w 181.8 / 201.3 (Q resident 194.9 / 216.2), with 32 rows 191.4 / 211.9 (203.7 /
//   227.5): behind 64x64x4w r32, which keeps two CTAs an SM (191.7 / 214.9; 214.8 / 248.3).
inline constexpr FfpaTiles kF32D512[] = {{64, 128, 512, 8, 128}};
inline constexpr FfpaTiles kF32D1024[] = {{32, 128, 1024, 8, 128}};
inline constexpr FfpaTiles kF16D512[] = {{64, 64, 512, 4, 128, 32}};
inline constexpr FfpaTiles kF16D1024[] = {{64, 128, 1024, 8, 128}};
inline constexpr int kMaxStages = 2;

constexpr std::span<const FfpaTiles> compiled_tiles(bool acc_f16, int dmax) {
  if (acc_f16)
    return dmax == 512 ? std::span<const FfpaTiles>(kF16D512) : std::span<const FfpaTiles>(kF16D1024);
  return dmax == 512 ? std::span<const FfpaTiles>(kF32D512) : std::span<const FfpaTiles>(kF32D1024);
}

struct FfpaChoice {
  FfpaTiles tiles;
  int stages;             // with Q streamed
  int stages_q_resident;  // with Q resident: 1 where 2 would cost the second CTA an SM or not fit
  const char* reason;
};

// acc_f16 = fp16 accumulation (fp16 inputs only); otherwise fp32 accumulation.
constexpr FfpaChoice choose_tiles(int d, bool acc_f16) {
  const FfpaTiles t = compiled_tiles(acc_f16, capacity_for(d))[0];
  if (acc_f16)
    return {
        t, 2, 1,
        d <= 512
            ? "D <= 512, fp16 O: 64x64, 4 warps = 2 row groups of 32 x 2 column halves (each K/V fragment "
              "feeds two m16 tiles), P through smem, 128-column chunks, 2 CTAs an SM; Q resident: "
              "stages 1 keeps the second CTA"
            : "D > 512, fp16 O: 64x128, 8 warps = 4 row groups x 2 column halves, P through smem, "
              "128-column chunks; Q resident: stages 1 (stages 2 exceeds 227 KiB above D = 768)"};
  return {
      t, 2, 2,
      d <= 512
          ? "D <= 512, fp32 O: 64x128, 8 warps = 4 row groups x 2 column halves (D/4 registers a thread), "
            "128-column chunks"
          : "D > 512, fp32 O: Br=32 (fp32 O of 64 rows would fill the register file), Bc=128, 2 row "
            "groups x 4 column quarters, 128-column chunks"};
}

constexpr int smem_stride(int chunk) { return chunk + 8; }  // rows of an odd number of 16-byte chunks

// Shared memory of one CTA [bytes]: (stages + 1) chunk buffers (Br + Bc rows, or Bc with Q
// resident), P and the cross-warp row statistics when a row's keys are split over warps, and with
// Q resident Q itself: Br rows of every chunk of head dim d (the only part that grows with D).
constexpr int smem_bytes(const FfpaTiles& t, int stages, bool q_resident, int d) {
  const int warps_m = t.br / t.warp_rows;
  const int warps_n = t.warps / warps_m;
  int bytes = (stages + 1) * ((q_resident ? 0 : t.br) + t.bc) * smem_stride(t.chunk) * 2;
  if (warps_n > 1) bytes += t.br * (t.bc + 8) * 2 + 2 * warps_n * t.br * 4;
  if (q_resident) bytes += t.br * ((d + t.chunk - 1) / t.chunk) * smem_stride(t.chunk) * 2;
  return bytes;
}

// The traits' stage count for head dim d, lowered to 1 where 2 would not fit smem_limit bytes a
// block (sm_80 allows 163 KiB, sm_90 227 KiB): a default runs wherever one stage fits.
constexpr int default_stages(int d, bool acc_f16, bool q_resident, int smem_limit) {
  const FfpaChoice c = choose_tiles(d, acc_f16);
  const int stages = q_resident ? c.stages_q_resident : c.stages;
  return stages > 1 && smem_bytes(c.tiles, stages, q_resident, d) > smem_limit ? 1 : stages;
}

inline std::string to_string(const FfpaTiles& t) {
  return std::to_string(t.br) + "x" + std::to_string(t.bc) + "x" + std::to_string(t.warps) + "w c" +
         std::to_string(t.chunk) + (t.warp_rows == 16 ? "" : " r" + std::to_string(t.warp_rows)) + " dmax " +
         std::to_string(t.dmax);
}

}  // namespace attn::ffpa
