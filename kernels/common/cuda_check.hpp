// Error checks for CUDA runtime and cuBLAS calls: a failing status throws attn::KernelError naming
// the call, its file:line and the error's name, so the engine records the case as `error`.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "kernels/api/kernel_spec.hpp"

namespace attn::detail {

inline std::string call_site(const char* call, const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": " + call;
}

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw KernelError(call_site(call, file, line) + " failed: " + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ")");
}

inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw KernelError(call_site(call, file, line) + " failed: " + cublasGetStatusName(status) + " (" +
                    cublasGetStatusString(status) + ")");
}

}  // namespace attn::detail

// ATTN_CUDA_CHECK(cudaMalloc(&p, n)); ATTN_CUBLAS_CHECK(cublasCreate(&h));
#define ATTN_CUDA_CHECK(call) ::attn::detail::check_cuda((call), #call, __FILE__, __LINE__)
#define ATTN_CUBLAS_CHECK(call) ::attn::detail::check_cublas((call), #call, __FILE__, __LINE__)
// After a <<<...>>> launch: reports a bad configuration (or an earlier asynchronous error) at once.
#define ATTN_CUDA_CHECK_LAUNCH(kernel_name) \
  ::attn::detail::check_cuda(cudaGetLastError(), "launch of " kernel_name, __FILE__, __LINE__)
