// NSA's selected branch (Problem::Select): which key blocks each (batch, KV head, query block)
// attends to. One deterministic draw from the problem's seed, so the CPU and CUDA references and
// every kernel see the same index tensor, and a case id names it exactly.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/api/problem.hpp"

namespace attn {

// The key blocks selected for query block `qb` of (batch b, KV head g), ascending: all of 0..qb
// when there are at most n, else block 0, the diagonal block qb and n - 2 distinct blocks of
// 1..qb-1 drawn (Floyd's sampling over splitmix64) from (seed, b, g, qb). With a file: its row
// (select_file.hpp), any causal blocks.
std::vector<std::int64_t> selected_blocks(const Problem& p, std::int64_t b, std::int64_t g, std::int64_t qb);

// The index tensor every kernel reads: int32 [B, Hkv, ceil(Sq / l'), n], each row ascending and
// padded with -1 where the query block has fewer than n candidates (NSA's block_indices, per
// query block). Callers check its size with selected_table_why_not first.
std::vector<std::int32_t> selected_block_table(const Problem& p);
std::int64_t selected_table_entries(const Problem& p);  // B x Hkv x ceil(Sq / l') x n

// Empty when the table of `p` fits int32 indexing and `max_entries` entries; else why, for kernel
// `id`'s why_not.
std::string selected_table_why_not(const Problem& p, const std::string& id, std::int64_t max_entries);

// Row i's visibility of key j in (b, KV head g) given its query block's selection (ascending).
inline bool selected_visible(const Problem& p, const std::vector<std::int64_t>& blocks, std::int64_t i,
                             std::int64_t j) {
  if (j > i) return false;
  const std::int64_t kb = j / p.select.block;
  for (const std::int64_t s : blocks)
    if (s == kb) return true;
  return false;
}

}  // namespace attn
