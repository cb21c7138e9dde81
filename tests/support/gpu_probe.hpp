// Whether a CUDA device is present, for GPU tests that skip with a printed reason without one.
#pragma once
#include <cuda_runtime_api.h>

#include <string>

namespace attn {

inline bool have_gpu(std::string& why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    why = e != cudaSuccess ? cudaGetErrorString(e) : "no device";
    return false;
  }
  return true;
}

}  // namespace attn

// Ends the current GoogleTest with a printed skip reason where no CUDA device is usable.
#define ATTN_SKIP_WITHOUT_GPU()                                              \
  do {                                                                       \
    std::string why_;                                                        \
    if (!::attn::have_gpu(why_)) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)
