// cudnn.sdpa's backward: cuDNN 9's fused flash-attention backward through the backend graph API,
// the graph cudnn-frontend's composite SDPA backward lowers to (docs/kernels/cudnn-sdpa.md).
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "kernels/api/kernel_spec.hpp"

namespace attn {

// Why cuDNN's backward cannot take `p` (which its forward takes); empty when it can.
std::string cudnn_sdpa_backward_why_not(const Problem& p);

class CudnnSdpaBackward {
 public:
  // Builds the graph and finalizes its plan (outside any timed region). Throws Unsupported when no
  // engine takes it.
  explicit CudnnSdpaBackward(const Problem& p);
  ~CudnnSdpaBackward();
  CudnnSdpaBackward(const CudnnSdpaBackward&) = delete;
  CudnnSdpaBackward& operator=(const CudnnSdpaBackward&) = delete;

  // dQ's fp32 accumulator and the row sums D = dO . O, then the plan's own workspace.
  std::size_t workspace_bytes() const;
  void run(const BackwardArgs& a);

 private:
  struct Graph;
  std::unique_ptr<Graph> m_graph;
};

}  // namespace attn
