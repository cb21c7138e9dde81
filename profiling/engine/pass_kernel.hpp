// A case's pass as one runnable kernel: the forward, the backward (given the forward's O and LSE,
// computed before), or both back to back. The engines' timer, graphs, launch statistics and CUPTI
// pass all launch a PreparedKernel's run(), so wrapping the pass here measures every pass the same
// way with no second code path.
#pragma once
#include "kernels/api/kernel_spec.hpp"

namespace attn {

class PassKernel final : public PreparedKernel {
 public:
  // `backward` is used when `pass` has a backward; both kernels' objects outlive this one.
  PassKernel(PreparedKernel& inner, Pass pass, const BackwardArgs& backward)
      : m_inner(inner), m_pass(pass), m_backward(backward) {}
  std::size_t workspace_bytes() const override { return m_inner.workspace_bytes(); }
  bool writes_lse() const override { return m_inner.writes_lse(); }
  void run(const AttentionArgs& args) override {
    if (has_forward(m_pass)) m_inner.run(args);
    if (has_backward(m_pass)) m_inner.run_backward(m_backward);
  }

 private:
  PreparedKernel& m_inner;
  Pass m_pass;
  BackwardArgs m_backward;
};

}  // namespace attn
