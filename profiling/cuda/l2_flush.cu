// The read-only L2 flush kernel.
#include "profiling/cuda/l2_flush.hpp"

namespace attn {

namespace {
__global__ void l2_flush_kernel(const uint4* __restrict__ data, std::size_t count, unsigned* sink) {
  unsigned acc = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const uint4 v = __ldcg(data + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  // The buffer is zero-filled once, so acc is 0 and the store never happens; the compiler cannot know.
  if (acc == 0xFFFFFFFFu) *sink = acc;
}
__global__ void l2_read_kernel(const uint4* __restrict__ data, std::size_t count, int passes,
                               unsigned* sink) {
  unsigned acc = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += stride) {
      const uint4 v = __ldcg(data + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  if (acc == 0xFFFFFFFFu) *sink = acc;  // never true for a zero-filled buffer; kept for the compiler
}
}  // namespace

void launch_l2_read(const void* buffer, std::size_t bytes, int passes, unsigned* sink, cudaStream_t stream) {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  l2_read_kernel<<<sms * 4, 512, 0, stream>>>(static_cast<const uint4*>(buffer), bytes / sizeof(uint4),
                                              passes, sink);
}

void launch_l2_flush(const void* buffer, std::size_t bytes, unsigned* sink, cudaStream_t stream) {
  const std::size_t count = bytes / sizeof(uint4);
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  l2_flush_kernel<<<sms * 4, 256, 0, stream>>>(static_cast<const uint4*>(buffer), count, sink);
}

}  // namespace attn
