// fa2.mma: the plain parameter block one launch reads (pointers, BSHD strides, sizes, the folded
// softmax scale and the mask band), filled on the host by fa2_mma.cu and passed by value.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/api/kernel_spec.hpp"

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
  // NSA's compressed branch in place of the band (Problem::Compress): row i sees keys
  // [0, min(Sk, floor((i + 1 - cmp_block) / cmp_stride) + 1)); cmp_block = 0: off.
  int cmp_block = 0;
  int cmp_stride = 1;
  // The right edge as the element test reads it, one multiply and no division or branch: key j is
  // masked for row i iff j * right_mul > i + right_add. Band: (1, Sk - Sq + right); compressed
  // branch: (d, 1 - l); unbounded: (0, 0), never (rows are >= 0).
  int right_mul = 0;
  int right_add = 0;

  // A varlen batch (Problem::VarLen), device arrays of batch + 1 prefix sums: sequence b's query
  // rows are [cu_q[b], cu_q[b + 1]), its keys [cu_kv[b], cu_kv[b + 1]), its LSE block [Hq, len] at
  // Hq x cu_q[b]; seq_q and seq_kv are the longest lengths (the grid). Null: dense.
  const int* cu_q = nullptr;
  const int* cu_kv = nullptr;
  // The sequence of each grid.z index, longest query length first: blocks are dispatched in grid
  // order, so the heaviest sequences start first and the short ones fill the tail (as the dense
  // kernel runs its heavy causal row blocks first).
  const int* seq_order = nullptr;
  // NSA's selected branch (Problem::Select): the index tensor [B, Hkv, sel_qblocks, sel_count] of
  // selected_blocks.hpp (ascending, -1 padded) and the block length l' (a multiple of the select
  // tile's 64 rows and keys); the band is causal. Null: not a selected-branch launch.
  const int* sel = nullptr;
  int sel_block = 0;
  int sel_count = 0;
  int sel_qblocks = 0;
};

// Exclusive end of row `row`'s visible keys in a sequence of seq_q queries and seq_kv keys: the
// band's right edge (right = -1: unbounded), or the compressed rule. Plain comparisons, no std::, so that
// device code calls it too.
#if defined(__CUDACC__)
__host__ __device__
#endif
    inline int
    band_end(const Fa2Params& p, int row, int seq_q, int seq_kv) {
  if (p.cmp_block > 0) {
    const int u = row + 1 - p.cmp_block;
    const int n = u < 0 ? 0 : u / p.cmp_stride + 1;
    return n < seq_kv ? n : seq_kv;
  }
  const int end = row + (seq_kv - seq_q) + p.right + 1;
  return p.right >= 0 && end < seq_kv ? end : seq_kv;
}

// The same for a dense launch, whose lengths are the parameters'.
#if defined(__CUDACC__)
__host__ __device__
#endif
    inline int
    band_end(const Fa2Params& p, int row) {
  return band_end(p, row, p.seq_q, p.seq_kv);
}

// The launch-shape limits both families share (B on grid.z, Hq on grid.y, rows and keys indexed in
// int32): empty when `p` fits, else the reason naming the fields, for kernel `id`'s why_not.
inline std::string launch_shape_why_not(const Problem& p, const std::string& id) {
  constexpr std::int64_t kMaxGridYZ = 65535;
  constexpr std::int64_t kMaxSeq = std::int64_t{1} << 30;
  if (p.batch > kMaxGridYZ || p.heads_q > kMaxGridYZ)
    return "batch = " + std::to_string(p.batch) + ", heads_q = " + std::to_string(p.heads_q) + ": " + id +
           " puts them on grid.z and grid.y, at most 65535 each";
  if (p.seq_q > kMaxSeq || p.seq_kv > kMaxSeq)
    return "seq_q = " + std::to_string(p.seq_q) + ", seq_kv = " + std::to_string(p.seq_kv) + ": " + id +
           " indexes rows in 32 bits, at most 2^30 each";
  return {};
}

// Fills a launch's parameters from the problem and the run's arguments (shared by fa2.mma and
// ffpa.l1, whose parameter block extends this one). Host-only.
inline void fill_params(Fa2Params& prm, const Problem& pr, const AttentionArgs& a) {
  prm.q = a.q;
  prm.k = a.k;
  prm.v = a.v;
  prm.o = a.o;
  prm.lse = a.lse;
  prm.batch = static_cast<int>(pr.batch);
  prm.heads_q = static_cast<int>(pr.heads_q);
  prm.heads_kv = static_cast<int>(pr.heads_kv);
  prm.group = static_cast<int>(pr.heads_q / pr.heads_kv);
  prm.seq_q = static_cast<int>(pr.seq_q);
  prm.seq_kv = static_cast<int>(pr.seq_kv);
  prm.q_row_stride = pr.heads_q * pr.head_dim;
  prm.kv_row_stride = pr.heads_kv * pr.head_dim;
  prm.scale = a.scale;
  prm.scale_log2 = static_cast<float>(static_cast<double>(a.scale) * 1.4426950408889634);
  // Bands wider than Sq + Sk change nothing: clamp so the kernel's int arithmetic cannot overflow.
  const std::int64_t wide = pr.seq_q + pr.seq_kv;
  std::int64_t right = pr.window.right >= 0 ? std::min(pr.window.right, wide) : -1;
  if (pr.causal || pr.select.active()) right = right >= 0 ? std::min<std::int64_t>(right, 0) : 0;
  prm.left = pr.window.left >= 0 ? static_cast<int>(std::min(pr.window.left, wide)) : -1;
  prm.right = static_cast<int>(right);
  if (prm.right >= 0) {
    prm.right_mul = 1;
    prm.right_add = prm.seq_kv - prm.seq_q + prm.right;
  }
  if (pr.compress.active()) {
    // A block past Sq + 1 is never complete, and with a stride of Sq or more only block 0 ever is:
    // clamped, they change nothing, and key * stride stays far inside int (why_not caps Sq at 2^24).
    prm.cmp_block = static_cast<int>(std::min(pr.compress.block, pr.seq_q + 1));
    prm.cmp_stride = static_cast<int>(std::min(pr.compress.stride, pr.seq_q));
    prm.right_mul = prm.cmp_stride;
    prm.right_add = 1 - prm.cmp_block;
  }
  if (pr.select.active()) {  // the table pointer is the prepared kernel's upload
    prm.sel_block = static_cast<int>(pr.select.block);
    prm.sel_count = static_cast<int>(pr.select.count);
    prm.sel_qblocks = static_cast<int>(pr.select.query_blocks(pr.seq_q));
  }
}

}  // namespace attn::fa2
