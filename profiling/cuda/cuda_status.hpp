// CUDA runtime error handling for the engine: a typed error that knows whether the context is
// gone (sticky errors such as an illegal address), so the engine can record `fault` vs `error`.
#pragma once
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace attn {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), m_code(code) {}
  cudaError_t code() const { return m_code; }
  bool out_of_memory() const { return m_code == cudaErrorMemoryAllocation; }

 private:
  cudaError_t m_code;
};

// Errors after which the CUDA context is unusable until the process exits.
inline bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

inline void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess)
    throw CudaError(e, std::string(call) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                           ") at " + file + ":" + std::to_string(line));
}

}  // namespace attn

#define ATTN_CUDA_CHECK(call) ::attn::cuda_check((call), #call, __FILE__, __LINE__)
