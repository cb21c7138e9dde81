// The CUDA variants of the debug kernels (registered only by register_debug_kernels, i.e. the
// CLI's --debug-kernels): an illegal address (a sticky error only a new process clears), a kernel
// that never finishes, an allocation larger than the GPU, and a planted off-by-one result.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/debug/debug_kernels.hpp"
#include "kernels/registry.hpp"

namespace attn {

namespace {

// Stores through `p`, which the host passes as null: an illegal address on every GPU (the
// first page of the unified address space is never mapped).
__global__ void store_through(int* p) { p[threadIdx.x] = 1; }

// Spins until *flag becomes non-zero, which nothing ever does. The volatile read keeps the
// compiler from hoisting it; the sleep keeps the SM from burning power while it waits.
__global__ void spin_on(const volatile int* flag) {
  while (*flag == 0) __nanosleep(1000);
}

class CudaFault final : public PreparedKernel {
 public:
  void run(const AttentionArgs& a) override {
    store_through<<<1, 32, 0, static_cast<cudaStream_t>(a.stream)>>>(nullptr);
    ATTN_CUDA_CHECK_LAUNCH("store_through");
  }
};

class CudaHang final : public PreparedKernel {
 public:
  std::size_t workspace_bytes() const override { return sizeof(int); }
  void run(const AttentionArgs& a) override {
    const auto stream = static_cast<cudaStream_t>(a.stream);
    ATTN_CUDA_CHECK(cudaMemsetAsync(a.workspace, 0, sizeof(int), stream));
    spin_on<<<1, 1, 0, stream>>>(static_cast<const int*>(a.workspace));
    ATTN_CUDA_CHECK_LAUNCH("spin_on");
  }
};

class CudaOom final : public PreparedKernel {
 public:
  std::size_t workspace_bytes() const override { return kDebugOomBytes; }
  void run(const AttentionArgs&) override {
    throw KernelError("debug.oom: ran although its workspace should not have been allocated");
  }
};

// cuda.reference, then every output row moved one query further (row i holds row i-1's result,
// row 0 keeps its own): the bug of a wrong row offset. The shift goes through a copy of O at the
// end of the workspace, as device-to-device copies must not overlap.
class CudaWrong final : public PreparedKernel {
 public:
  CudaWrong(const Problem& p, std::unique_ptr<PreparedKernel> inner)
      : m_problem(p), m_inner(std::move(inner)) {}
  std::size_t workspace_bytes() const override { return inner_workspace() + o_bytes(); }
  bool writes_lse() const override { return m_inner->writes_lse(); }
  void run(const AttentionArgs& a) override {
    AttentionArgs inner = a;
    inner.workspace_bytes = inner_workspace();
    m_inner->run(inner);
    const auto stream = static_cast<cudaStream_t>(a.stream);
    auto* copy = static_cast<std::uint8_t*>(a.workspace) + inner_workspace();
    auto* o = static_cast<std::uint8_t*>(a.o);
    const std::size_t row = static_cast<std::size_t>(m_problem.heads_q * m_problem.head_dim_v) *
                            dtype_bytes(m_problem.dtype);  // one query [bytes]
    const std::size_t per_batch = row * static_cast<std::size_t>(m_problem.seq_q);
    ATTN_CUDA_CHECK(cudaMemcpyAsync(copy, o, o_bytes(), cudaMemcpyDeviceToDevice, stream));
    ATTN_CUDA_CHECK(cudaMemcpy2DAsync(o + row, per_batch, copy, per_batch, per_batch - row,
                                      static_cast<std::size_t>(m_problem.batch), cudaMemcpyDeviceToDevice,
                                      stream));
  }

 private:
  // Rounded up to 256 bytes so the copy of O stays aligned like any allocation.
  std::size_t inner_workspace() const { return (m_inner->workspace_bytes() + 255) / 256 * 256; }
  std::size_t o_bytes() const {
    return static_cast<std::size_t>(m_problem.o_elems()) * dtype_bytes(m_problem.dtype);
  }

  Problem m_problem;
  std::unique_ptr<PreparedKernel> m_inner;
};

const KernelSpec& inner_reference() {
  const KernelSpec* k = find_kernel("cuda.reference");
  if (!k) throw KernelError("debug.wrong: cuda.reference is not registered");
  return *k;
}

std::string accept_any(const Problem&, const Knobs&) { return {}; }

}  // namespace

std::vector<KernelSpec> make_cuda_debug_specs() {
  std::vector<KernelSpec> specs;
  auto add = [&specs](const char* id, const char* description) -> KernelSpec& {
    KernelSpec& s = specs.emplace_back();
    s.id = id;
    s.description = description;
    s.backend = Backend::cuda;
    s.why_not = accept_any;
    return s;
  };
  add("debug.fault", "debug: stores through a null pointer (cudaErrorIllegalAddress, sticky)").prepare =
      [](const Problem&, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<CudaFault>();
  };
  add("debug.hang", "debug: a kernel that spins forever").prepare =
      [](const Problem&, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<CudaHang>();
  };
  add("debug.oom", "debug: asks for a 1 EiB workspace").prepare =
      [](const Problem&, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<CudaOom>();
  };
  KernelSpec& wrong = add("debug.wrong", "debug: cuda.reference with every output row shifted by one query");
  wrong.why_not = [](const Problem& p, const Knobs& k) -> std::string {
    if (p.seq_q < 2)
      return "seq_q = " + std::to_string(p.seq_q) + ": debug.wrong needs seq_q >= 2 to shift a row";
    return inner_reference().why_not(p, k);
  };
  wrong.prepare = [](const Problem& p, const Knobs& k) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<CudaWrong>(p, inner_reference().prepare(p, k));
  };
  return specs;
}

}  // namespace attn
