// Stream-ordered copies (see transfer.hpp for why plain cudaMemcpy is not enough here).
#include "profiling/cuda/transfer.hpp"

#include "profiling/cuda/cuda_status.hpp"

namespace attn {

void copy_to_device(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  ATTN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void copy_to_host(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  ATTN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace attn
