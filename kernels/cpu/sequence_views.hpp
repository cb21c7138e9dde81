// A varlen batch's sequence b as a dense batch-1 problem: the CPU kernels' arguments offset to its
// rows (Problem::VarLen's packing: rows at the prefix sums, LSE blocks at Hq x the prefix).
#pragma once
#include <cstdint>

#include "kernels/api/kernel_spec.hpp"

namespace attn {

template <class T>
T* rows_at(T* base, std::int64_t row, std::int64_t row_elems) {
  return base == nullptr ? nullptr : base + row * row_elems;
}

inline AttentionArgs sequence_args(const Problem& p, const AttentionArgs& a, std::int64_t b) {
  const std::int64_t qs = p.q_start(b), ks = p.kv_start(b);
  AttentionArgs s = a;
  s.q = rows_at(static_cast<const float*>(a.q), qs, p.heads_q * p.head_dim);
  s.k = rows_at(static_cast<const float*>(a.k), ks, p.heads_kv * p.head_dim);
  s.v = rows_at(static_cast<const float*>(a.v), ks, p.heads_kv * p.head_dim_v);
  s.o = rows_at(static_cast<float*>(a.o), qs, p.heads_q * p.head_dim_v);
  s.lse = rows_at(a.lse, qs, p.heads_q);
  return s;
}

inline BackwardArgs sequence_args(const Problem& p, const BackwardArgs& a, std::int64_t b) {
  const std::int64_t qs = p.q_start(b), ks = p.kv_start(b);
  const std::int64_t q_row = p.heads_q * p.head_dim, o_row = p.heads_q * p.head_dim_v;
  const std::int64_t k_row = p.heads_kv * p.head_dim, v_row = p.heads_kv * p.head_dim_v;
  BackwardArgs s = a;
  s.q = rows_at(static_cast<const float*>(a.q), qs, q_row);
  s.k = rows_at(static_cast<const float*>(a.k), ks, k_row);
  s.v = rows_at(static_cast<const float*>(a.v), ks, v_row);
  s.o = rows_at(static_cast<const float*>(a.o), qs, o_row);
  s.d_o = rows_at(static_cast<const float*>(a.d_o), qs, o_row);
  s.lse = rows_at(a.lse, qs, p.heads_q);
  s.dq = rows_at(static_cast<float*>(a.dq), qs, q_row);
  s.dk = rows_at(static_cast<float*>(a.dk), ks, k_row);
  s.dv = rows_at(static_cast<float*>(a.dv), ks, v_row);
  return s;
}

}  // namespace attn
