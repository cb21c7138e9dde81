// fa2.mma: the plain parameter block one launch reads (pointers, BSHD strides, sizes, the folded
// softmax scale and the mask band), filled on the host by fa2_mma.cu and passed by value.
#pragma once
#include <cstdint>

namespace attn::fa2 {

struct Fa2Params {
  const void* q = nullptr;  // [B, Sq, Hq, D]
  const void* k = nullptr;  // [B, Sk, Hkv, D]
  const void* v = nullptr;  // [B, Sk, Hkv, D]
  void* o = nullptr;        // [B, Sq, Hq, D]
  float* lse = nullptr;     // [B, Hq, Sq] natural log; null = not written

  int batch = 1;
  int heads_q = 1;
  int heads_kv = 1;
  int group = 1;  // Hq / Hkv: query head h reads KV head h / group
  int seq_q = 1;
  int seq_kv = 1;

  // Row strides [elements]: Hq * D for Q and O, Hkv * D for K and V.
  std::int64_t q_row_stride = 0;
  std::int64_t kv_row_stride = 0;

  float scale = 1.0f;       // softmax scale (> 0)
  float scale_log2 = 1.0f;  // scale * log2(e): scores go through exp2 with the scale folded in

  // Band around the bottom-right diagonal d(i) = i + Sk - Sq: key j is visible to row i iff
  // j >= d(i) - left (when left >= 0) and j <= d(i) + right (when right >= 0). Causal is folded in
  // as right = min(right, 0), so the kernel has one band test; -1 = unbounded.
  int left = -1;
  int right = -1;
};

}  // namespace attn::fa2
