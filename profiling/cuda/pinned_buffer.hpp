// An owning page-locked host allocation that only grows: the staging of copies that must run on the
// copy engines alongside a kernel (a copy into pageable memory is staged by the driver, and a strided
// one goes row by row).
#pragma once
#include <cstddef>
#include <string>
#include <utility>

#include "profiling/cuda/cuda_status.hpp"

namespace attn {

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : m_ptr(std::exchange(o.m_ptr, nullptr)), m_bytes(std::exchange(o.m_bytes, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      m_ptr = std::exchange(o.m_ptr, nullptr);
      m_bytes = std::exchange(o.m_bytes, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { release(); }

  // At least `bytes` bytes; the contents are not kept when it grows.
  void reserve(std::size_t bytes) {
    if (bytes <= m_bytes) return;
    release();
    const cudaError_t e = cudaMallocHost(&m_ptr, bytes);
    if (e != cudaSuccess) {
      m_ptr = nullptr;
      (void)cudaGetLastError();
      throw CudaError(e,
                      "cudaMallocHost(" + std::to_string(bytes) + " bytes) failed: " + cudaGetErrorString(e));
    }
    m_bytes = bytes;
  }
  unsigned char* get() const { return static_cast<unsigned char*>(m_ptr); }
  std::size_t bytes() const { return m_bytes; }

 private:
  void release() {
    if (m_ptr) (void)cudaFreeHost(m_ptr);
    m_ptr = nullptr;
    m_bytes = 0;
  }
  void* m_ptr = nullptr;
  std::size_t m_bytes = 0;
};

}  // namespace attn
