// The attention problem shape every kernel, planner and report shares (docs/design.md "Core types"),
// with the exact mask semantics and the FLOP/byte counting rules.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/api/dtype.hpp"
#include "kernels/api/pass.hpp"

namespace attn {

// Sliding window around the (bottom-right aligned) diagonal; -1 means unbounded on that side.
struct Window {
  std::int64_t left = -1;
  std::int64_t right = -1;
  bool active() const { return left >= 0 || right >= 0; }
  friend bool operator==(const Window&, const Window&) = default;
};

// NSA's compressed branch (Native Sparse Attention, arXiv 2502.11089): the keys are compressed
// blocks, key j summarising raw positions [j * stride, j * stride + block), and query row i (raw
// position i: queries start the sequence) sees block j iff j * stride + block - 1 <= i, so row i
// sees num_cmp(i) = floor((i + 1 - block) / stride) + 1 blocks (none before position block - 1).
// It is its own causal rule: a problem with it has neither `causal` nor a window (validate()).
struct Compress {
  std::int64_t block = 0;   // l; 0 = not a compressed-branch problem
  std::int64_t stride = 0;  // d
  bool active() const { return block > 0; }
  // num_cmp(i): blocks complete at raw position i (0 while i + 1 < block).
  std::int64_t blocks_at(std::int64_t i) const {
    const std::int64_t u = i + 1 - block;
    return u < 0 ? 0 : u / stride + 1;
  }
  // The key rows of a sequence of `positions` raw positions: its blocks, at least one (a row no
  // query sees when the sequence is shorter than a block), as a varlen batch and its buckets size them.
  std::int64_t key_rows(std::int64_t positions) const {
    return std::max<std::int64_t>(1, blocks_at(positions - 1));
  }
  friend bool operator==(const Compress&, const Compress&) = default;
};

// NSA's selected branch (arXiv 2502.11089, section 3.3.3): block-sparse causal attention in which the
// keys come in blocks of `block` (l') positions and each query block of the same l' rows shares, per
// KV head (so across its GQA group, as NSA's kernel does), `count` (n) selected key blocks: row i sees
// key j iff j <= i and block j / l' is selected for (batch, KV head, i / l'). Query block q has the
// q + 1 causal candidates 0..q; with n or fewer it takes them all, else the diagonal block q, block 0
// and n - 2 of 1..q-1 drawn from `seed` (selected_blocks.hpp), so every row past the first n blocks
// sees n - 1 whole blocks and its own diagonal triangle whatever the draw: the pair count is closed
// form. Or the index tensor is read from `file` (select_file.hpp), any causal blocks per row, whose
// content hash and pair count planning records here (a changed file is refused, not rerun).
// Self-attention (Sq = Sk) and its own causal rule: no causal flag, window, compress or varlen.
struct Select {
  std::int64_t block = 0;  // l'; 0 = not a selected-branch problem
  std::int64_t count = 0;  // n
  std::uint64_t seed = 0;
  std::string file;             // the index tensor's file, as given; empty: drawn from the seed
  std::string file_sha256;      // of the file's bytes, set by planning
  std::int64_t file_pairs = 0;  // the file's visible pairs over all batches and KV heads
  bool active() const { return block > 0; }
  bool from_file() const { return !file.empty(); }
  std::int64_t query_blocks(std::int64_t seq) const { return (seq + block - 1) / block; }
  friend bool operator==(const Select&, const Select&) = default;
};

// A variable-length batch (FlashAttention's varlen): `batch` sequences of their own lengths, packed
// back to back. Sequence b has q[b] queries and kv[b] keys; its rows start at the prefix sums of the
// lengths before it, and its LSE block [Hq, q[b]] at Hq x that prefix, so each sequence is a dense
// batch-1 problem at an offset (Problem::sequence), and equal lengths are exactly the dense layout.
// Empty: a dense problem. With it, seq_q and seq_kv are the longest sequence's lengths.
struct VarLen {
  std::vector<std::int64_t> q, kv;
  bool active() const { return !q.empty(); }
  friend bool operator==(const VarLen&, const VarLen&) = default;
};

enum class Layout { bshd };

// Tensors are row-major BSHD (a varlen batch packs its sequences' rows instead, see VarLen): Q [B, Sq, Hq,
// D], K [B, Sk, Hkv, D], V [B, Sk, Hkv, Dv], O [B, Sq, Hq, Dv], LSE [B, Hq, Sq] in fp32 (natural log). Query
// head h reads KV head h / (Hq / Hkv). Query row i sees key j iff j lies in visible_keys(i): the diagonal is
// aligned to the bottom-right corner (offset Sk - Sq), as FlashAttention does when Sq != Sk.
struct Problem {
  std::int64_t batch = 1;
  std::int64_t heads_q = 1;
  std::int64_t heads_kv = 1;
  std::int64_t seq_q = 1;
  std::int64_t seq_kv = 1;
  std::int64_t head_dim = 64;
  std::int64_t head_dim_v = 64;
  DType dtype = DType::fp16;
  bool causal = false;
  Window window;
  Compress compress;
  Select select;
  VarLen varlen;
  Layout layout = Layout::bshd;
  // What a case computes on this shape; the forward by default. Part of the problem so that every
  // comparison keyed on it (baselines, speedups, shards, the reference cache) keeps passes apart.
  Pass pass = Pass::fwd;

  friend bool operator==(const Problem&, const Problem&) = default;

  std::int64_t diagonal_offset() const { return seq_kv - seq_q; }

  // Half-open key range [first, last) visible to query row i; empty when first >= last.
  struct KeyRange {
    std::int64_t first;
    std::int64_t last;
    std::int64_t size() const { return last > first ? last - first : 0; }
  };
  // A selected-branch problem: the causal envelope [0, i + 1), of which only the selected blocks are
  // visible (selected_blocks.hpp answers per batch and KV head).
  KeyRange visible_keys(std::int64_t i) const {
    if (compress.active()) return {0, std::min(seq_kv, compress.blocks_at(i))};
    if (select.active()) return {0, std::min(seq_kv, i + 1)};
    const std::int64_t diag = i + diagonal_offset();
    std::int64_t first = 0;
    std::int64_t last = seq_kv;
    if (causal) last = std::min(last, diag + 1);
    if (window.right >= 0) last = std::min(last, diag + window.right + 1);
    if (window.left >= 0) first = std::max(first, diag - window.left);
    return {first, std::max(first, last)};
  }
  // The band/compressed rule alone; a selected branch also needs selected_blocks.hpp's test.
  bool visible(std::int64_t i, std::int64_t j) const {
    const KeyRange r = visible_keys(i);
    return j >= r.first && j < r.last;
  }

  // Exact number of unmasked (query, key) pairs of one (batch, head), closed-form (no loop over
  // rows: a planner or supervisor asked about seq = 2^40 answers at once). Saturates at 2^63 - 1.
  // A varlen batch: the pairs of all its sequences, for one head.
  std::int64_t visible_pairs_per_head() const;

  // Query and key rows over the whole batch: B x Sq and B x Sk, or the sums of a varlen batch's.
  std::int64_t total_q() const;
  std::int64_t total_kv() const;
  // Sequence b of a varlen batch as the dense batch-1 problem it is, and where its rows start.
  Problem sequence(std::int64_t b) const;
  std::int64_t q_start(std::int64_t b) const;
  std::int64_t kv_start(std::int64_t b) const;

  std::int64_t q_elems() const { return total_q() * heads_q * head_dim; }
  std::int64_t k_elems() const { return total_kv() * heads_kv * head_dim; }
  std::int64_t v_elems() const { return total_kv() * heads_kv * head_dim_v; }
  std::int64_t o_elems() const { return total_q() * heads_q * head_dim_v; }
  std::int64_t lse_elems() const { return heads_q * total_q(); }

  // The forward's 2 * B * Hq * (D + Dv) * P (docs/design.md "Counting").
  double forward_flops() const;
  // The pass's: forward_flops() x pass_flop_factor(pass) (2.5 for bwd, 3.5 for fwd+bwd).
  double flops() const;
  // Bytes of the tensors the pass holds (Q, K, V and O; dO, dQ, dK and dV too when it has a
  // backward), in double so that no size overflows (the planner's size limit).
  double tensor_bytes() const;
  // The forward: Q, K, V read once and O written once, plus LSE [fp32] when the kernel writes it.
  // The backward: Q, K, V, O, dO and LSE read once, dQ, dK and dV written once. fwd+bwd: both.
  std::int64_t min_bytes(bool with_lse) const;

  double default_scale() const;

  // Empty when the shape is well formed; otherwise names the field, its value and what is allowed.
  std::string validate() const;
  // The part of validate() no planned case can violate (every size >= 1, window sides >= -1,
  // compress and select both >= 1 or both 0, one length >= 1 per varlen sequence with Sq and Sk the
  // longest): a record breaking it was not written by attnscope. validate() adds the GQA grouping
  // rule and that a compressed or selected problem has no causal flag, window or varlen (and a
  // selected one Sq = Sk and no compress).
  std::string validate_sizes() const;

  // "2x16x8192x128" (B x Hq x Sq x D), the NVTX/label form; full_label() adds everything else.
  std::string shape_label() const;
  std::string mask_label() const;  // "full", "causal", "win64,0", "causal+win128,-1", "cmp32,16",
                                   // "sel64x16" (seed 0), "sel64x16s7"
  std::string full_label() const;  // ends with " bwd" / " fwd+bwd" for those passes
};

}  // namespace attn
