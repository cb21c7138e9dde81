// The problem stage: everything that depends only on the problem and the seed, shared by all the
// kernels of that problem (the planner orders cases problem-major): the seeded inputs on the
// device, the reference output (cpu.reference, or cuda.reference plus sampled cpu.reference rows
// on large problems) and cuDNN's error on the same inputs for the tolerance rule. The check of a
// kernel's output against them lives here too, so the rule is stated once.
#pragma once
#include <cuda_runtime_api.h>

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/cpu/cpu_reference.hpp"
#include "profiling/cuda/case_buffers.hpp"
#include "profiling/cuda/device_buffer.hpp"
#include "profiling/cuda/pinned_buffer.hpp"
#include "profiling/engine/check.hpp"
#include "profiling/engine/inputs.hpp"

namespace attn {

class ProblemCache {
 public:
  ProblemCache(std::uint64_t seed, cudaStream_t stream) : m_seed(seed), m_stream(stream) {}

  // Generates and uploads the inputs unless `p` is the cached problem; drops the old reference.
  // The passes of one shape share everything: problem() is the shape with pass = fwd.
  void use(const Problem& p);
  const Problem& problem() const { return m_problem; }
  // The incoming gradient dO of a backward, drawn on first use (its own seed stream).
  const DeviceBuffer& d_o();
  const DeviceBuffer& q() const { return m_q; }
  const DeviceBuffer& k() const { return m_k; }
  const DeviceBuffer& v() const { return m_v; }
  // Q, K and V, and dO when `pass` has a backward (call d_o() first).
  std::size_t input_bytes(Pass pass) const {
    return m_q.bytes() + m_k.bytes() + m_v.bytes() + (has_backward(pass) ? m_d_o.bytes() : 0);
  }

  // The check of `kernel`'s output `out` (on the device, the problem's dtype) and its LSE (on the
  // host, empty when it writes none) on the cached problem: the reference and cuDNN's error bar
  // are computed on first use, after the kernel under test has its buffers, so a case that does
  // not fit reports `oom` without paying for a reference first. Large problems are compared on the
  // device. Throws KernelError when cuda.reference itself disagrees with cpu.reference on the
  // sampled rows.
  CheckVerdict check(const KernelSpec& kernel, const DeviceBuffer& out, const std::vector<float>& lse);

  // Computes the reference and cuDNN's error bar now, unless done for this problem; check() calls it.
  void ensure_reference();
  // Starts building cuDNN's graph for the error bar on a host thread now (once per problem), so
  // that it overlaps the first case's own set-up and check run as well as the reference kernel.
  void start_cudnn_build();
  // The same for `next`, the problem expected after this one (use() takes the build over when it
  // comes). After start_cudnn_build: the host thread builds in the order asked.
  void prefetch_cudnn_build(const Problem& next);

  // The check of a backward's dQ, dK and dV in `b` against the reference gradients (computed on
  // first use: cpu.reference's fp64 backward on small problems, cuda.reference's fp32 one on the
  // fp32 inputs otherwise), each under the gradient rule.
  // The bound is 2x cudnn.sdpa's error on each gradient where cuDNN's backward takes the problem
  // (measured once per problem; `kernel` cudnn.sdpa itself is held to the gradient bound).
  GradVerdict check_gradients(const KernelSpec& kernel, const CaseBuffers& b);

  // The reference's name (after check()), e.g. "cpu.reference".
  const std::string& reference_name() const { return m_reference; }
  // cuDNN's rel_l2 on these inputs, when cudnn.sdpa takes the problem (after check()).
  const std::optional<double>& cudnn_rel_l2() const { return m_cudnn_rel_l2; }

 private:
  void compute_reference();
  void compute_gradients();
  void measure_cudnn_gradient_error();
  GradErrors gradient_errors(const CaseBuffers& b) const;
  // The sampled rows' heads: their copies into m_pinned enqueued on `copies` (and the rows drawn
  // into m_rows); then, once the copies are complete, cpu.reference on them into m_rows_ref.
  struct Slice {
    std::size_t offset = 0;  // [B] into m_pinned
    std::size_t count = 0;   // elements of the problem's dtype
  };
  struct SampledHead {
    std::int64_t b = 0, h = 0;
    Problem one;  // the head's sequence as a problem of one head
    Slice q, k, v;
    std::vector<RowIndex> rows;  // rows of `one`
  };
  std::vector<SampledHead> fetch_sample_heads(cudaStream_t copies);
  void compute_sample_rows(const std::vector<SampledHead>& heads);
  // cuDNN's own error on these inputs, from the kernel `prepared` brings (built on a host thread
  // while the GPU computed the reference; invalid where cuDNN does not take the problem).
  void measure_cudnn_error(std::future<std::unique_ptr<PreparedKernel>> prepared);
  std::future<std::unique_ptr<PreparedKernel>> prepare_cudnn_async(const Problem& p) const;
  // rel_l2 of the sampled rows of `out` (on the device, of type `t`) against cpu.reference's.
  double rows_rel_l2(const void* out, DType t) const;
  void add_sampled_rows(const DeviceBuffer& out, CheckVerdict& v) const;
  // Error of `out` (device, the problem's dtype) against the reference output.
  ErrorStats output_error(const DeviceBuffer& out) const;

  std::uint64_t m_seed;
  cudaStream_t m_stream;
  Problem m_problem;
  bool m_valid = false;
  DeviceBuffer m_q, m_k, m_v;
  bool m_has_reference = false;
  std::future<std::unique_ptr<PreparedKernel>> m_cudnn_build;  // start_cudnn_build's, until used
  struct Prefetch {
    Problem problem;
    std::future<std::unique_ptr<PreparedKernel>> build;
  };
  std::optional<Prefetch> m_prefetch;  // prefetch_cudnn_build's, until its problem comes
  PinnedBuffer m_pinned;               // the sampled rows' host copies
  std::vector<float> m_ref_o;          // cpu.reference's output (small problems)
  DeviceBuffer m_ref_dev;              // cuda.reference's output, fp32 (large problems)
  std::vector<double> m_ref_lse;
  std::string m_reference;
  std::vector<RowIndex> m_rows;    // sampled rows (large problems only)
  std::vector<double> m_rows_ref;  // cpu.reference on those rows, [rows, Dv]
  std::optional<double> m_cudnn_rel_l2;
  DeviceBuffer m_d_o;
  bool m_has_gradients = false;
  std::vector<float> m_ref_dq, m_ref_dk, m_ref_dv;        // cpu.reference's (small problems)
  DeviceBuffer m_ref_dq_dev, m_ref_dk_dev, m_ref_dv_dev;  // cuda.reference's, fp32 (large problems)
  std::string m_grad_reference;
  std::optional<GradErrors> m_cudnn_grad;
};

}  // namespace attn
