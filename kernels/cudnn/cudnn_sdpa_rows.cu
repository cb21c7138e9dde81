// The LSE scatter for cudnn.sdpa's sliced-query path (see cudnn_sdpa_rows.hpp). cuDNN's bottom-right
// diagonal band needs seq_q <= seq_kv, so the leading query rows that see no key are cut off
// before cuDNN runs; this kernel puts their LSE (-inf) and cuDNN's packed stats into place.
#include <cuda_runtime.h>

#include <cmath>
#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/cudnn/cudnn_sdpa_rows.hpp"

namespace attn::cudnn {
namespace {

__global__ void scatter_lse_kernel(float* lse, const float* stats, std::int64_t total, std::int64_t seq_q,
                                   std::int64_t skipped) {
  const std::int64_t kept = seq_q - skipped;
  for (std::int64_t n = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; n < total;
       n += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = n / seq_q;
    const std::int64_t i = n - row * seq_q;
    lse[n] = i < skipped ? -INFINITY : stats[row * kept + (i - skipped)];
  }
}

__global__ void fill_int32_kernel(std::int32_t* dst, std::int32_t value, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    dst[i] = value;
}

}  // namespace

void launch_fill_int32(std::int32_t* dst, std::int32_t value, std::int64_t n, void* stream) {
  if (n == 0) return;
  const std::int64_t want = (n + 255) / 256;
  fill_int32_kernel<<<static_cast<unsigned>(want < 1024 ? want : 1024), 256, 0,
                      static_cast<cudaStream_t>(stream)>>>(dst, value, n);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw KernelError(std::string("cudnn.sdpa: sequence length fill failed: ") + cudaGetErrorName(err) +
                      ": " + cudaGetErrorString(err));
}

void launch_scatter_lse(float* lse, const float* stats, std::int64_t bh, std::int64_t seq_q,
                        std::int64_t skipped, void* stream) {
  const std::int64_t total = bh * seq_q;
  if (total == 0) return;
  constexpr int kThreads = 256;
  // Grid-stride loop: 4096 blocks [x 256 threads] cover any LSE size without overflowing gridDim.
  const std::int64_t want = (total + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(want < 4096 ? want : 4096);
  scatter_lse_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(lse, stats, total, seq_q,
                                                                                 skipped);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw KernelError(std::string("cudnn.sdpa: LSE scatter launch failed: ") + cudaGetErrorName(err) + ": " +
                      cudaGetErrorString(err));
}

}  // namespace attn::cudnn
