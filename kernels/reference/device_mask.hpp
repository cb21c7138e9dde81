// The attention mask as a plain struct that host and device code both evaluate: the same band
// (or compressed-branch) test as Problem::visible_keys, so the CUDA kernels and the CPU oracle agree on every
// (row, key). Host-compilable (no CUDA headers) so CPU tests can pin it against Problem.
#pragma once
#include <cstdint>

#include "kernels/api/problem.hpp"

#if defined(__CUDACC__)
#define ATTN_HOST_DEVICE __host__ __device__
#else
#define ATTN_HOST_DEVICE
#endif

namespace attn {

struct DeviceMask {
  std::int64_t seq_q = 1;
  std::int64_t seq_kv = 1;
  std::int64_t left = -1;   // -1 = unbounded
  std::int64_t right = -1;  // -1 = unbounded
  bool causal = false;
  // NSA's compressed branch (Problem::Compress): when cmp_block > 0, row i sees keys
  // [0, min(Sk, num_cmp(i))) and nothing else applies.
  std::int64_t cmp_block = 0;
  std::int64_t cmp_stride = 1;
  // NSA's selected branch (Problem::Select): within the causal range, key j is visible to row i of
  // (batch b, KV head g) only if block j / sel_block is in row i's query block's entry of the index
  // tensor `sel` [B, Hkv, sel_qblocks, sel_count] (selected_blocks.hpp; the kernel uploads it).
  const std::int32_t* sel = nullptr;
  std::int64_t sel_block = 0;
  std::int64_t sel_count = 0;
  std::int64_t sel_qblocks = 0;
  std::int64_t heads_q = 1;
  std::int64_t heads_kv = 1;

  // Bottom-right aligned diagonal of query row i.
  ATTN_HOST_DEVICE std::int64_t diag(std::int64_t i) const { return i + seq_kv - seq_q; }
  // Half-open visible key range [first(i), last(i)); empty when last == first.
  ATTN_HOST_DEVICE std::int64_t first(std::int64_t i) const {
    if (cmp_block > 0) return 0;
    const std::int64_t from = diag(i) - left;
    return (left >= 0 && from > 0) ? from : 0;
  }
  ATTN_HOST_DEVICE std::int64_t last(std::int64_t i) const {
    if (cmp_block > 0) {
      const std::int64_t u = i + 1 - cmp_block;
      const std::int64_t n = u < 0 ? 0 : u / cmp_stride + 1;
      return n < seq_kv ? n : seq_kv;
    }
    const std::int64_t d = diag(i);
    std::int64_t end = seq_kv;
    if (causal && d + 1 < end) end = d + 1;
    if (right >= 0 && d + right + 1 < end) end = d + right + 1;
    const std::int64_t begin = first(i);
    return end > begin ? end : begin;
  }
  ATTN_HOST_DEVICE bool visible(std::int64_t i, std::int64_t j) const { return j >= first(i) && j < last(i); }
  // The selected branch's further test (true without one); a linear scan of the n entries, fine for
  // an oracle.
  ATTN_HOST_DEVICE bool selected(std::int64_t b, std::int64_t g, std::int64_t i, std::int64_t j) const {
    if (sel == nullptr) return true;
    const std::int32_t* row = sel + ((b * heads_kv + g) * sel_qblocks + i / sel_block) * sel_count;
    const std::int64_t kb = j / sel_block;
    for (std::int64_t e = 0; e < sel_count; ++e)
      if (row[e] == kb) return true;
    return false;
  }
};

inline DeviceMask make_device_mask(const Problem& p) {
  DeviceMask m;
  m.seq_q = p.seq_q;
  m.seq_kv = p.seq_kv;
  m.left = p.window.left;
  m.right = p.window.right;
  m.causal = p.causal;
  if (p.compress.active()) {
    m.cmp_block = p.compress.block;
    m.cmp_stride = p.compress.stride;
  }
  if (p.select.active()) {  // the causal envelope; `sel` is the caller's device copy of the table
    m.causal = true;
    m.sel_block = p.select.block;
    m.sel_count = p.select.count;
    m.sel_qblocks = p.select.query_blocks(p.seq_q);
    m.heads_q = p.heads_q;
    m.heads_kv = p.heads_kv;
  }
  return m;
}

}  // namespace attn
