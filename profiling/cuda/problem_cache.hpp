// The problem stage: everything that depends only on the problem and the seed, shared by all the
// kernels of that problem (the planner orders cases problem-major): the seeded inputs on the
// device, the reference output (cpu.reference, or cuda.reference plus sampled cpu.reference rows
// on large problems) and cuDNN's error on the same inputs for the tolerance rule. The check of a
// kernel's output against them lives here too, so the rule is stated once.
#pragma once
#include <cuda_runtime_api.h>

#include <optional>
#include <string>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/cpu/cpu_reference.hpp"
#include "profiling/cuda/device_buffer.hpp"
#include "profiling/engine/check.hpp"
#include "profiling/engine/inputs.hpp"

namespace attn {

class ProblemCache {
 public:
  ProblemCache(std::uint64_t seed, cudaStream_t stream) : m_seed(seed), m_stream(stream) {}

  // Generates and uploads the inputs unless `p` is the cached problem; drops the old reference.
  void use(const Problem& p);
  const Problem& problem() const { return m_problem; }
  const HostInputs& host() const { return m_host; }
  const DeviceBuffer& q() const { return m_q; }
  const DeviceBuffer& k() const { return m_k; }
  const DeviceBuffer& v() const { return m_v; }
  std::size_t input_bytes() const { return m_q.bytes() + m_k.bytes() + m_v.bytes(); }

  // The check of `kernel`'s output on the cached problem: the reference and cuDNN's error bar are
  // computed on first use, after the kernel under test has its buffers, so a case that does not
  // fit reports `oom` without paying for a reference first. Throws KernelError when
  // cuda.reference itself disagrees with cpu.reference on the sampled rows.
  CheckVerdict check(const KernelSpec& kernel, const std::vector<float>& out, const std::vector<float>& lse);

  // The reference's name (after check()), e.g. "cpu.reference".
  const std::string& reference_name() const { return m_reference; }
  // cuDNN's rel_l2 on these inputs, when cudnn.sdpa takes the problem (after check()).
  const std::optional<double>& cudnn_rel_l2() const { return m_cudnn_rel_l2; }

 private:
  void ensure_reference();
  void compute_reference();
  void measure_cudnn_error();
  double rows_rel_l2(const std::vector<float>& out) const;
  void add_sampled_rows(const std::vector<float>& out, CheckVerdict& v) const;

  std::uint64_t m_seed;
  cudaStream_t m_stream;
  Problem m_problem;
  bool m_valid = false;
  HostInputs m_host;
  DeviceBuffer m_q, m_k, m_v;
  bool m_has_reference = false;
  std::vector<float> m_ref_o;
  std::vector<double> m_ref_lse;
  std::string m_reference;
  std::vector<RowIndex> m_rows;    // sampled rows (large problems only)
  std::vector<double> m_rows_ref;  // cpu.reference on those rows, [rows, Dv]
  std::optional<double> m_cudnn_rel_l2;
};

}  // namespace attn
