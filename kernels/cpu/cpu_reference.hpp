// The oracle: attention with fp64 accumulation on the CPU, exact for every mask the Problem can
// express. Inputs are fp32 arrays holding values already rounded to the problem's dtype, so the
// oracle sees exactly what a GPU kernel reads.
#pragma once
#include <cstdint>
#include <span>

#include "kernels/api/problem.hpp"

namespace attn {

// One output row: batch b, query head h, query index i.
struct RowIndex {
  std::int64_t b = 0, h = 0, i = 0;
};

// Computes O [B, Sq, Hq, Dv] (BSHD) and, when lse is non-null, LSE [B, Hq, Sq]. Rows with no
// visible key get O = 0 and LSE = -inf. Threaded over B x Hq.
void cpu_reference_attention(const Problem& p, const float* q, const float* k, const float* v, double scale,
                             double* o, double* lse);

// Where a slice (one sequence, one head) of a larger problem starts: a row's selected blocks
// (Problem::Select) follow the full problem's coordinates and, for a file's table, its shape.
struct SliceOrigin {
  const Problem* full = nullptr;  // null: the rows' problem is the whole one
  std::int64_t batch = 0, kv_head = 0;
};

// The same for selected rows only: o_rows is [rows.size(), Dv], lse_rows [rows.size()] (nullable).
// `origin`: p is a slice (one sequence, one head) of a selected-branch problem.
void cpu_reference_rows(const Problem& p, const float* q, const float* k, const float* v, double scale,
                        std::span<const RowIndex> rows, double* o_rows, double* lse_rows,
                        SliceOrigin origin = {});

// The exact gradients of sum(dO * O) (docs/design.md "Passes"), fp64 throughout: dq [B, Sq, Hq, D],
// dk [B, Sk, Hkv, D], dv [B, Sk, Hkv, Dv] (BSHD), dK and dV summed over the query heads of each
// KV group. P and the row sums D_i = sum_j P_ij dP_ij are recomputed exactly, not read from a
// forward. Rows with no visible key contribute nothing. Threaded over B x Hkv.
void cpu_reference_backward(const Problem& p, const float* q, const float* k, const float* v,
                            const float* d_o, double scale, double* dq, double* dk, double* dv);

}  // namespace attn
