// ffpa.l1: the parameter block one launch reads. Like fa2.mma's, plus the head dim, which is a
// runtime value here: a kernel is compiled for a head-dim capacity (kDMax) and loops over D in
// 64-column chunks, so one instantiation serves every multiple of 32 up to its capacity.
#pragma once
#include <cstdint>

namespace attn::ffpa {

struct FfpaParams {
  const void* q = nullptr;  // [B, Sq, Hq, D]
  const void* k = nullptr;  // [B, Sk, Hkv, D]
  const void* v = nullptr;  // [B, Sk, Hkv, D]
  void* o = nullptr;        // [B, Sq, Hq, D]
  float* lse = nullptr;     // [B, Hq, Sq] natural log; null = not written

  int batch = 1;
  int heads_q = 1;
  int heads_kv = 1;
  int group = 1;  // Hq / Hkv
  int seq_q = 1;
  int seq_kv = 1;
  int head_dim = 0;  // a multiple of 32, at most the kernel's capacity

  std::int64_t q_row_stride = 0;   // Hq * D [elements]
  std::int64_t kv_row_stride = 0;  // Hkv * D [elements]

  float scale = 1.0f;
  float scale_log2 = 1.0f;  // scale * log2(e)

  // Band around the bottom-right diagonal, causal folded into right (as fa2.mma); -1 = unbounded.
  int left = -1;
  int right = -1;
};

}  // namespace attn::ffpa
