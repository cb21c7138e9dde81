// An owning device allocation. Allocation failure throws CudaError (out_of_memory() == true).
#pragma once
#include <cstddef>
#include <utility>

#include "profiling/cuda/cuda_status.hpp"

namespace attn {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : m_bytes(bytes) {
    if (bytes) {
      const cudaError_t e = cudaMalloc(&m_ptr, bytes);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();  // allocation failure is not sticky; clear it
        throw CudaError(e,
                        "cudaMalloc(" + std::to_string(bytes) + " bytes) failed: " + cudaGetErrorString(e));
      }
    }
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : m_ptr(std::exchange(o.m_ptr, nullptr)), m_bytes(std::exchange(o.m_bytes, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      m_ptr = std::exchange(o.m_ptr, nullptr);
      m_bytes = std::exchange(o.m_bytes, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void reset() {
    if (m_ptr) (void)cudaFree(m_ptr);
    m_ptr = nullptr;
    m_bytes = 0;
  }
  void* get() const { return m_ptr; }
  template <class T>
  T* as() const {
    return static_cast<T*>(m_ptr);
  }
  std::size_t bytes() const { return m_bytes; }

 private:
  void* m_ptr = nullptr;
  std::size_t m_bytes = 0;
};

}  // namespace attn
