// An int32 array uploaded to the current device once and freed with its owner: a kernel's launch
// arguments that follow from the problem alone (a varlen batch's prefix sums, sequence lengths,
// ragged offsets), made at prepare so that no timed run pays for them.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels/common/cuda_check.hpp"

namespace attn {

class DeviceInt32Array {
 public:
  explicit DeviceInt32Array(const std::vector<std::int32_t>& host) {
    if (host.empty()) return;
    const std::size_t bytes = host.size() * sizeof(std::int32_t);
    ATTN_CUDA_CHECK(cudaMalloc(&m_data, bytes));
    if (const cudaError_t copied = cudaMemcpy(m_data, host.data(), bytes, cudaMemcpyHostToDevice);
        copied != cudaSuccess) {
      (void)cudaFree(m_data);
      m_data = nullptr;
      ATTN_CUDA_CHECK(copied);
    }
  }
  ~DeviceInt32Array() {
    if (m_data) (void)cudaFree(m_data);
  }
  DeviceInt32Array(const DeviceInt32Array&) = delete;
  DeviceInt32Array& operator=(const DeviceInt32Array&) = delete;
  const std::int32_t* get() const { return m_data; }
  std::int32_t* get() { return m_data; }  // for arrays a kernel writes (a work counter)

 private:
  std::int32_t* m_data = nullptr;
};

}  // namespace attn
