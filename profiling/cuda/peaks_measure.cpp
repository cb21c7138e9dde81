// Measures a GPU's ceilings for `attnscope peaks` and the run record: dense fp16/bf16 tensor
// TFLOPS from cuBLAS 8192^3 GEMMs (fp32 accumulation, as torch.matmul) and DRAM GB/s from a 2 GiB
// device-to-device copy counting read + write. Medians of event-timed repeats after a warm-up.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/api/half_convert.hpp"
#include "profiling/cuda/cuda_stream.hpp"
#include "profiling/cuda/device_buffer.hpp"
#include "profiling/cuda/l2_flush.hpp"
#include "profiling/cuda/transfer.hpp"
#include "profiling/peaks.hpp"
#include "profiling/result.hpp"

namespace attn {

namespace {

void cublas_check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed: " + cublasGetStatusName(status));
}
#define ATTN_PEAKS_CUBLAS_CHECK(call) cublas_check((call), #call)

constexpr int kGemmN = 8192;
constexpr int kWarmup = 5;
constexpr int kRepeats = 20;
constexpr std::size_t kCopyBytes = std::size_t{2} << 30;  // [B] 2 GiB, 40x the H100's L2
constexpr int kL2Passes = 64;                             // reads of the L2-resident buffer per timed launch

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    ATTN_CUDA_CHECK(cudaEventCreate(&start));
    ATTN_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
};

template <class F>
double median_ms(cudaStream_t stream, F&& body) {
  Events ev;
  for (int i = 0; i < kWarmup; ++i) body();
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  for (int i = 0; i < kRepeats; ++i) {
    ATTN_CUDA_CHECK(cudaEventRecord(ev.start, stream));
    body();
    ATTN_CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    ATTN_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float t = 0;
    ATTN_CUDA_CHECK(cudaEventElapsedTime(&t, ev.start, ev.stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Uniform values in [-1, 1): zeros would draw less power and overstate the sustained clock.
DeviceBuffer random_matrix(DType t, std::size_t count, std::uint32_t seed, cudaStream_t stream) {
  std::vector<std::uint16_t> host(count);
  std::uint32_t s = seed;
  for (auto& h : host) {
    s = s * 1664525u + 1013904223u;
    const float v = static_cast<float>(s >> 8) / 8388608.0f - 1.0f;
    h = t == DType::bf16 ? float_to_bf16(v) : float_to_fp16(v);
  }
  DeviceBuffer d(count * sizeof(std::uint16_t));
  copy_to_device(d.get(), host.data(), d.bytes(), stream);  // ordered before the GEMMs on `stream`
  return d;
}

double gemm_tflops(cublasHandle_t handle, cudaStream_t stream, DType t) {
  const std::size_t n2 = static_cast<std::size_t>(kGemmN) * kGemmN;
  DeviceBuffer a = random_matrix(t, n2, 1, stream), b = random_matrix(t, n2, 2, stream);
  DeviceBuffer c(n2 * sizeof(std::uint16_t));
  const cudaDataType_t type = t == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.0f, beta = 0.0f;
  const double ms = median_ms(stream, [&] {
    ATTN_PEAKS_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, kGemmN, kGemmN, kGemmN, &alpha,
                                         a.get(), type, kGemmN, b.get(), type, kGemmN, &beta, c.get(), type,
                                         kGemmN, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  });
  return 2.0 * std::pow(static_cast<double>(kGemmN), 3) / (ms * 1e-3) * 1e-12;
}

}  // namespace

MeasuredPeaks measure_peaks() {
  try {
    ATTN_CUDA_CHECK(cudaSetDevice(0));
    const CudaStream owned_stream;
    const cudaStream_t stream = owned_stream.get();
    cublasHandle_t handle = nullptr;
    ATTN_PEAKS_CUBLAS_CHECK(cublasCreate(&handle));
    struct HandleGuard {
      cublasHandle_t h;
      ~HandleGuard() { (void)cublasDestroy(h); }
    } handle_guard{handle};
    ATTN_PEAKS_CUBLAS_CHECK(cublasSetStream(handle, stream));

    MeasuredPeaks p;
    p.tensor_tflops_fp16 = gemm_tflops(handle, stream, DType::fp16);
    p.tensor_tflops_bf16 = gemm_tflops(handle, stream, DType::bf16);

    std::size_t free_b = 0, total_b = 0;
    ATTN_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    // Two buffers must fit with room to spare on smaller boards; keep each far above L2.
    const std::size_t bytes = std::min(kCopyBytes, free_b / 4 / (1 << 20) * (1 << 20));
    DeviceBuffer src(bytes), dst(bytes);
    ATTN_CUDA_CHECK(cudaMemsetAsync(src.get(), 0x5A, bytes, stream));
    const double ms = median_ms(stream, [&] {
      ATTN_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    });
    p.dram_gbps = 2.0 * static_cast<double>(bytes) / (ms * 1e-3) * 1e-9;
    int l2_size = 0;
    ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&l2_size, cudaDevAttrL2CacheSize, 0));
    const std::size_t l2_buffer =
        std::max<std::size_t>(static_cast<std::size_t>(l2_size) / 4, 1 << 20) & ~std::size_t{15};
    DeviceBuffer resident(l2_buffer), sink(sizeof(unsigned));
    ATTN_CUDA_CHECK(cudaMemsetAsync(resident.get(), 0, l2_buffer, stream));
    const double l2_ms = median_ms(stream, [&] {
      launch_l2_read(resident.get(), l2_buffer, kL2Passes, sink.as<unsigned>(), stream);
      ATTN_CUDA_CHECK(cudaGetLastError());
    });
    p.l2_gbps = static_cast<double>(kL2Passes) * static_cast<double>(l2_buffer) / (l2_ms * 1e-3) * 1e-9;
    p.measured_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
    p.method = fmt::format(
        "cublasGemmEx {0}x{0}x{0} fp16/bf16 (fp32 accumulation), {1:.0f} MiB device copy counting read + "
        "write, {4} reads of a {5:.1f} MiB L2-resident buffer; median of {2} after {3} warm-up",
        kGemmN, static_cast<double>(bytes) / (1 << 20), kRepeats, kWarmup, kL2Passes,
        static_cast<double>(l2_buffer) / (1 << 20));
    return p;
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("peaks measurement failed: ") + e.what());
  }
}

}  // namespace attn
