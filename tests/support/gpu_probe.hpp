// Whether a CUDA device is present, for GPU tests that skip with a printed reason without one, and
// whether an sm_90a-only kernel can run here.
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "kernels/registry.hpp"

namespace attn {

// The registered kernel `id` built for sm_90a only (`built`: its family's ATTNSCOPE_HAS_* macro), or
// null with the reason to skip: not built, the GPU cannot be asked, or it is not compute capability 9.0.
inline const KernelSpec* sm90a_kernel(const std::string& id, bool built, std::string& why) {
  const KernelSpec* spec = find_kernel(id);
  if (spec == nullptr || !built) {
    why = id + " not built: CMAKE_CUDA_ARCHITECTURES has no 90a target";
    return nullptr;
  }
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    why = "cannot query the GPU";
    return nullptr;
  }
  if (major != 9 || minor != 0) {
    why = "GPU is sm_" + std::to_string(major * 10 + minor) + "; " + id + " runs on sm_90a only";
    return nullptr;
  }
  return spec;
}

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
