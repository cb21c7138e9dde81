// A varlen batch's sequence b as a dense batch-1 problem (Problem::sequence): a kernel's arguments
// offset to its rows (Problem::VarLen's packing: rows at the prefix sums, LSE blocks at Hq x the
// prefix). Element size from the problem's dtype, so CPU (fp32) and CUDA kernels share it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/api/kernel_spec.hpp"

namespace attn {

// The B + 1 first rows of a varlen batch's sequences (the lengths' prefix sums, the last one the
// total), in one pass: for code that visits every sequence (Problem::q_start sums afresh per call).
inline std::vector<std::int64_t> sequence_starts(const std::vector<std::int64_t>& lengths) {
  std::vector<std::int64_t> out{0};
  out.reserve(lengths.size() + 1);
  for (const std::int64_t n : lengths) out.push_back(out.back() + n);
  return out;
}

// The same in units of `row` elements, as int32 device arguments take them (cu_seqlens, ragged
// offsets); callers check that the total fits.
inline std::vector<std::int32_t> int32_sequence_starts(const std::vector<std::int64_t>& lengths,
                                                       std::int64_t row = 1) {
  std::vector<std::int32_t> out;
  out.reserve(lengths.size() + 1);
  for (const std::int64_t start : sequence_starts(lengths))
    out.push_back(static_cast<std::int32_t>(start * row));
  return out;
}

namespace sequence_detail {

template <class T>
T* rows_at(T* base, std::int64_t row, std::int64_t row_elems, std::size_t elem_bytes) {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return base == nullptr ? nullptr
                         : reinterpret_cast<T*>(reinterpret_cast<Byte*>(base) +
                                                static_cast<std::size_t>(row * row_elems) * elem_bytes);
}

}  // namespace sequence_detail

inline AttentionArgs sequence_args(const Problem& p, const AttentionArgs& a, std::int64_t b) {
  using sequence_detail::rows_at;
  const std::int64_t qs = p.q_start(b), ks = p.kv_start(b);
  const std::size_t e = dtype_bytes(p.dtype);
  AttentionArgs s = a;
  s.q = rows_at(a.q, qs, p.heads_q * p.head_dim, e);
  s.k = rows_at(a.k, ks, p.heads_kv * p.head_dim, e);
  s.v = rows_at(a.v, ks, p.heads_kv * p.head_dim_v, e);
  s.o = rows_at(a.o, qs, p.heads_q * p.head_dim_v, e);
  s.lse = rows_at(a.lse, qs, p.heads_q, sizeof(float));
  return s;
}

inline BackwardArgs sequence_args(const Problem& p, const BackwardArgs& a, std::int64_t b) {
  using sequence_detail::rows_at;
  const std::int64_t qs = p.q_start(b), ks = p.kv_start(b);
  const std::int64_t q_row = p.heads_q * p.head_dim, o_row = p.heads_q * p.head_dim_v;
  const std::int64_t k_row = p.heads_kv * p.head_dim, v_row = p.heads_kv * p.head_dim_v;
  const std::size_t e = dtype_bytes(p.dtype);
  BackwardArgs s = a;
  s.q = rows_at(a.q, qs, q_row, e);
  s.k = rows_at(a.k, ks, k_row, e);
  s.v = rows_at(a.v, ks, v_row, e);
  s.o = rows_at(a.o, qs, o_row, e);
  s.d_o = rows_at(a.d_o, qs, o_row, e);
  s.lse = rows_at(a.lse, qs, p.heads_q, sizeof(float));
  s.dq = rows_at(a.dq, qs, q_row, e);
  s.dk = rows_at(a.dk, ks, k_row, e);
  s.dv = rows_at(a.dv, ks, v_row, e);
  return s;
}

}  // namespace attn
