// The CPU variants of the debug kernels (registered only by register_debug_kernels, i.e. the CLI's
// --debug-kernels): each misbehaves in one way a real kernel can, so the worker/supervisor path
// that must survive it can be tested without a GPU. debug_cuda.cu holds the GPU variants.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/debug/debug_kernels.hpp"
#include "kernels/registry.hpp"

namespace attn {

std::string cpu_kernel_why_not(const Problem& p, const Knobs& k);

namespace {

// debug.fault: a crash the process cannot survive. On the CPU that is abort() (SIGABRT).
class CpuFault final : public PreparedKernel {
 public:
  void run(const AttentionArgs&) override {
    std::fputs("debug.fault: aborting on purpose (CPU stand-in for an illegal address)\n", stderr);
    std::fflush(stderr);
    std::abort();
  }
};

// debug.hang: never returns; only a signal ends it (the supervisor's --case-timeout kill).
class CpuHang final : public PreparedKernel {
 public:
  void run(const AttentionArgs&) override {
    std::fputs("debug.hang: sleeping forever on purpose\n", stderr);
    std::fflush(stderr);
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
};

// debug.oom: its workspace is larger than any host's address space, so the allocation fails
// cleanly (bad_alloc) instead of waking the OOM killer.
class CpuOom final : public PreparedKernel {
 public:
  std::size_t workspace_bytes() const override { return kDebugOomBytes; }
  void run(const AttentionArgs&) override {
    throw KernelError("debug.oom: ran although its workspace should not have been allocated");
  }
};

// debug.wrong: cpu.flash with a planted off-by-one: every output row lands one query further
// (row i holds row i-1's result; row 0 keeps its own), the bug of a wrong row offset.
class CpuWrong final : public PreparedKernel {
 public:
  CpuWrong(const Problem& p, std::unique_ptr<PreparedKernel> inner)
      : m_problem(p), m_inner(std::move(inner)) {}
  std::size_t workspace_bytes() const override { return m_inner->workspace_bytes(); }
  bool writes_lse() const override { return m_inner->writes_lse(); }
  void run(const AttentionArgs& args) override {
    m_inner->run(args);
    auto* o = static_cast<float*>(args.o);
    const std::size_t row = static_cast<std::size_t>(m_problem.heads_q * m_problem.head_dim_v);  // one query
    const std::size_t per_batch = row * static_cast<std::size_t>(m_problem.seq_q);
    for (std::int64_t b = 0; b < m_problem.batch; ++b) {
      float* base = o + static_cast<std::size_t>(b) * per_batch;
      std::memmove(base + row, base, (per_batch - row) * sizeof(float));
    }
  }

 private:
  Problem m_problem;
  std::unique_ptr<PreparedKernel> m_inner;
};

// debug.wrong_grad: cpu.flash whose forward is right and whose backward scales dK of KV head 0 by
// 1.01, the bug of a per-head factor applied twice: small enough to hide in a loss curve, and what
// the gradient check must catch.
class CpuWrongGrad final : public PreparedKernel {
 public:
  CpuWrongGrad(const Problem& p, std::unique_ptr<PreparedKernel> inner)
      : m_problem(p), m_inner(std::move(inner)) {}
  std::size_t workspace_bytes() const override { return m_inner->workspace_bytes(); }
  std::size_t backward_workspace_bytes() const override { return m_inner->backward_workspace_bytes(); }
  bool writes_lse() const override { return m_inner->writes_lse(); }
  void run(const AttentionArgs& args) override { m_inner->run(args); }
  void run_backward(const BackwardArgs& args) override {
    m_inner->run_backward(args);
    auto* dk = static_cast<float*>(args.dk);
    const Problem& p = m_problem;
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t j = 0; j < p.seq_kv; ++j)
        for (std::int64_t d = 0; d < p.head_dim; ++d)
          dk[((b * p.seq_kv + j) * p.heads_kv) * p.head_dim + d] *= 1.01f;
  }

 private:
  Problem m_problem;
  std::unique_ptr<PreparedKernel> m_inner;
};

const KernelSpec& inner_flash() {
  const KernelSpec* k = find_kernel("cpu.flash");
  if (!k) throw KernelError("debug.wrong: cpu.flash is not registered");
  return *k;
}

Knobs defaults_of(const KernelSpec& k) {
  Knobs knobs;
  for (const KnobSpec& s : k.knobs) knobs[s.name] = s.default_value;
  return knobs;
}

}  // namespace

std::vector<KernelSpec> make_cpu_debug_specs() {
  std::vector<KernelSpec> specs;
  auto add = [&specs](const char* id, const char* description) -> KernelSpec& {
    KernelSpec& s = specs.emplace_back();
    s.id = id;
    s.description = description;
    s.backend = Backend::cpu;
    s.why_not = cpu_kernel_why_not;
    return s;
  };
  add("debug.fault", "debug: aborts the process (SIGABRT), the CPU stand-in for an illegal address").prepare =
      [](const Problem&, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<CpuFault>();
  };
  add("debug.hang", "debug: never returns").prepare = [](const Problem&,
                                                         const Knobs&) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<CpuHang>();
  };
  add("debug.oom", "debug: asks for a 1 EiB workspace").prepare =
      [](const Problem&, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<CpuOom>();
  };
  KernelSpec& wrong = add("debug.wrong", "debug: cpu.flash with every output row shifted by one query");
  wrong.why_not = [](const Problem& p, const Knobs&) -> std::string {
    if (p.seq_q < 2)
      return "seq_q = " + std::to_string(p.seq_q) + ": debug.wrong needs seq_q >= 2 to shift a row";
    const KernelSpec& inner = inner_flash();
    return inner.why_not(p, defaults_of(inner));
  };
  wrong.prepare = [](const Problem& p, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    const KernelSpec& inner = inner_flash();
    return std::make_unique<CpuWrong>(p, inner.prepare(p, defaults_of(inner)));
  };
  KernelSpec& wrong_grad =
      add("debug.wrong_grad", "debug: cpu.flash with dK of KV head 0 scaled by 1.01 in the backward");
  wrong_grad.backward_why_not = [](const Problem&, const Knobs&) { return std::string(); };
  wrong_grad.prepare = [](const Problem& p, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    const KernelSpec& inner = inner_flash();
    return std::make_unique<CpuWrongGrad>(p, inner.prepare(p, defaults_of(inner)));
  };
  return specs;
}

}  // namespace attn
