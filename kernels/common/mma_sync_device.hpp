// The current GPU as the fa2 and ffpa kernels' prepare() need it: compute capability and the shared
// memory a block may opt in to; refuses GPUs below sm_80 (mma.sync m16n8k16, cp.async).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/common/cuda_check.hpp"

namespace attn {

struct MmaSyncDevice {
  int major = 0;
  int minor = 0;
  int smem_optin = 0;  // [bytes] dynamic shared memory a block, after cudaFuncSetAttribute
};

inline MmaSyncDevice mma_sync_device(const std::string& kernel_id) {
  int device = 0;
  MmaSyncDevice d;
  ATTN_CUDA_CHECK(cudaGetDevice(&device));
  ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&d.major, cudaDevAttrComputeCapabilityMajor, device));
  ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&d.minor, cudaDevAttrComputeCapabilityMinor, device));
  ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&d.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (d.major < 8)
    throw Unsupported("compute capability " + std::to_string(d.major) + "." + std::to_string(d.minor) + ": " +
                      kernel_id + " needs sm_80 or newer (mma.sync m16n8k16, cp.async)");
  return d;
}

}  // namespace attn
