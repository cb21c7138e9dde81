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
  return m;
}

}  // namespace attn
