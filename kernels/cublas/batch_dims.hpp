// The shape the cuBLAS paths (forward and backward) lay out their per-(batch, query head) pointer
// arrays by: passed by value to the kernels that fill them.
#pragma once
#include <cstdint>

#include "kernels/api/problem.hpp"

namespace attn {

struct BatchDims {
  std::int64_t heads_q, heads_kv, group;
  std::int64_t seq_q, seq_kv;
  std::int64_t head_dim, head_dim_v;
  std::int64_t elem_bytes;  // Q, K, V, O, P and the gradients' element size
  std::int64_t count;       // B * Hq
};

inline BatchDims batch_dims(const Problem& p) {
  return {
      p.heads_q,          p.heads_kv, p.heads_q / p.heads_kv, p.seq_q,
      p.seq_kv,           p.head_dim, p.head_dim_v,           static_cast<std::int64_t>(dtype_bytes(p.dtype)),
      p.batch * p.heads_q};
}

}  // namespace attn
