// An owned non-blocking CUDA stream, destroyed with its owner: for work that must not queue behind
// the engine's stream (copies beside a kernel, a measurement of its own).
#pragma once
#include <cuda_runtime_api.h>

#include "profiling/cuda/cuda_status.hpp"

namespace attn {

class CudaStream {
 public:
  CudaStream() { ATTN_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking)); }
  ~CudaStream() {
    if (m_stream) (void)cudaStreamDestroy(m_stream);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return m_stream; }

 private:
  cudaStream_t m_stream = nullptr;
};

}  // namespace attn
