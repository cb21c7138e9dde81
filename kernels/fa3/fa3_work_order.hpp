// fa3.wgmma's work list: the order persistent CTAs draw (row block, head, batch) items in. Heads are
// grouped into sections whose K and V fit in L2 together; sections run one after another, and inside
// a section row blocks run from the last (the most keys under a causal mask) down, each over the
// section's heads, so the heaviest work starts first while the K/V being read stays in L2. Host and
// device code (the tests enumerate the list on the host).
#pragma once

#if defined(__CUDACC__)
#define ATTN_FA3_HOST_DEVICE __host__ __device__
#else
#define ATTN_FA3_HOST_DEVICE
#endif

namespace attn::fa3 {

// A section's K and V: at most this many bytes (a third of the H100's 50 MiB L2). Query heads of one
// GQA group share their K and V.
inline constexpr long long kL2SectionBytes = 16ll << 20;
constexpr int section_heads(long long seq_kv, int d, int group, long long heads_batch) {
  const long long kv_bytes = seq_kv * d * 2 * 2 / (group > 0 ? group : 1);
  long long n = kv_bytes > 0 ? kL2SectionBytes / kv_bytes : heads_batch;
  if (n > heads_batch) n = heads_batch;
  return static_cast<int>(n < 1 ? 1 : n);
}

struct WorkItem {
  int m_block, h, b;
};

// Item w of the list, for m_blocks row blocks a head, heads_q x batch (batch, head) pairs and
// sections of per_section pairs (the last may hold fewer).
ATTN_FA3_HOST_DEVICE inline WorkItem work_item(int w, int m_blocks, int heads_q, int batch, int per_section) {
  const int heads_batch = heads_q * batch;
  const int first = w / (per_section * m_blocks) * per_section;
  const int left = heads_batch - first;
  const int heads = per_section < left ? per_section : left;
  const int i = w - first * m_blocks;
  const int hb = first + i % heads;
  return {m_blocks - 1 - i / heads, hb % heads_q, hb / heads_q};
}

}  // namespace attn::fa3

#undef ATTN_FA3_HOST_DEVICE
