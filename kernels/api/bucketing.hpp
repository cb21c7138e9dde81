// Dense-bucketed execution of a varlen batch by any kernel: the NSA playbook's dense baseline next
// to a kernel's packed varlen path, so that varlen-vs-dense is one comparison of two variants of
// one case ("fa2.mma" against "fa2.mma@bucket=128"). Each sequence is padded at its end to a
// multiple of `bucket` rows; the sequences of one padded length form one dense batch, and the
// kernel runs once per batch on staged copies. Exact only where the padding is invisible to every
// real row: each sequence has as many queries as keys, and no row sees a key to its right (causal,
// or a window whose right side is 0).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/api/kernel_spec.hpp"

namespace attn {

// One dense batch: the padded length, the varlen sequences it holds (in batch order) and the dense
// problem the kernel runs on it.
struct DenseBucket {
  std::int64_t length = 0;
  std::vector<std::int64_t> sequences;
  Problem problem;
};

// The batches of `p` (a varlen problem) with buckets of `bucket` rows, shortest first.
std::vector<DenseBucket> dense_buckets(const Problem& p, std::int64_t bucket);

// What the padding costs: query rows and (query, key) pairs launched against those of the batch.
struct PaddingCost {
  std::int64_t real_rows = 0, launched_rows = 0;
  double real_pairs = 0, launched_pairs = 0;  // per head
  // The fraction of the launched pairs (the work, FLOP-weighted) that are padding.
  double waste() const { return launched_pairs > 0 ? 1.0 - real_pairs / launched_pairs : 0.0; }
};
PaddingCost padding_cost(const Problem& p, std::int64_t bucket);

// The problem-side rules alone: empty when `bucket` can run `p`, else the reason naming the field.
std::string bucketing_why_not(const Problem& p, std::int64_t bucket);

// `knobs` without the bucket knob: what the kernel itself is prepared with.
Knobs kernel_knobs(const Knobs& knobs);

// The one way an engine prepares a case: `spec.prepare`, or the bucketed wrapper when the knobs
// ask for it (kernel_why_not has admitted the case). The wrapper stages inputs in copy_in, runs the
// kernel once per bucket in run (what is timed) and scatters O and LSE back in copy_out.
std::unique_ptr<PreparedKernel> prepare_kernel(const KernelSpec& spec, const Problem& p, const Knobs& knobs);

}  // namespace attn
