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

// One block row per (b, h): its len_b stats, coalesced both ways.
__global__ void scatter_varlen_lse_kernel(float* lse, const float* stats, const std::int32_t* cu_q,
                                          std::int64_t heads, std::int64_t max_q) {
  const std::int64_t bh = blockIdx.x;
  const std::int64_t b = bh / heads, h = bh % heads;
  const std::int64_t first = cu_q[b], len = cu_q[b + 1] - first;
  float* dst = lse + first * heads + h * len;
  const float* src = stats + bh * max_q;
  for (std::int64_t i = threadIdx.x; i < len; i += blockDim.x) dst[i] = src[i];
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

void launch_scatter_varlen_lse(float* lse, const float* stats, const std::int32_t* cu_q, std::int64_t batch,
                               std::int64_t heads, std::int64_t max_q, void* stream) {
  const std::int64_t rows = batch * heads;
  if (rows == 0) return;
  if (rows > 0x7fffffff) throw KernelError("cudnn.sdpa: varlen LSE scatter: B x Hq beyond the grid");
  scatter_varlen_lse_kernel<<<static_cast<unsigned>(rows), 256, 0, static_cast<cudaStream_t>(stream)>>>(
      lse, stats, cu_q, heads, max_q);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw KernelError(std::string("cudnn.sdpa: varlen LSE scatter launch failed: ") + cudaGetErrorName(err) +
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
