// Kernels of device_inputs.hpp.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "profiling/cuda/cuda_status.hpp"
#include "profiling/cuda/device_buffer.hpp"
#include "profiling/cuda/device_inputs.hpp"

namespace attn {

namespace {

constexpr int kThreads = 256;

__device__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ double unit_open(std::uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

template <typename T>
__device__ T from_float(float x);
template <>
__device__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ float from_float<float>(float x) {
  return x;
}

__device__ float to_float(__half x) { return __half2float(x); }
__device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ float to_float(float x) { return x; }

// One thread per pair, as the host's fill_normal: z0 to element 2i, z1 to 2i + 1.
template <typename T>
__global__ void normal_kernel(T* __restrict__ dst, std::int64_t n, std::uint64_t key) {
  const std::int64_t pairs = (n + 1) / 2;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t pi = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; pi < pairs;
       pi += stride) {
    const std::uint64_t base = key ^ (static_cast<std::uint64_t>(pi) * 2);
    const double u1 = unit_open(splitmix64(base));
    const double u2 = unit_open(splitmix64(base + 1));
    const double r = sqrt(-2.0 * log(u1));
    const double z0 = r * cos(2.0 * M_PI * u2), z1 = r * sin(2.0 * M_PI * u2);
    const std::int64_t i = 2 * pi;
    dst[i] = from_float<T>(static_cast<float>(z0));
    if (i + 1 < n) dst[i + 1] = from_float<T>(static_cast<float>(z1));
  }
}

template <typename T>
__global__ void widen_kernel(const T* __restrict__ src, float* __restrict__ dst, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = to_float(src[i]);
}

struct Sums {
  double diff2, ref2;
  unsigned long long max_abs_bits;  // a non-negative double's bits order as the double does
  unsigned long long nonfinite;
};

template <typename T>
__global__ void compare_kernel(const T* __restrict__ out, const float* __restrict__ ref, std::int64_t n,
                               Sums* sums) {
  double diff2 = 0, ref2 = 0, max_abs = 0;
  unsigned long long nonfinite = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const double o = to_float(out[i]), r = ref[i];
    if (!isfinite(o)) {
      ++nonfinite;
      continue;
    }
    const double d = o - r;
    diff2 += d * d;
    ref2 += r * r;
    max_abs = fmax(max_abs, fabs(d));
  }
  __shared__ double s_diff[kThreads], s_ref[kThreads], s_max[kThreads];
  __shared__ unsigned long long s_nf[kThreads];
  const unsigned t = threadIdx.x;
  s_diff[t] = diff2, s_ref[t] = ref2, s_max[t] = max_abs, s_nf[t] = nonfinite;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (t < half) {
      s_diff[t] += s_diff[t + half];
      s_ref[t] += s_ref[t + half];
      s_max[t] = fmax(s_max[t], s_max[t + half]);
      s_nf[t] += s_nf[t + half];
    }
    __syncthreads();
  }
  if (t == 0) {
    atomicAdd(&sums->diff2, s_diff[0]);
    atomicAdd(&sums->ref2, s_ref[0]);
    atomicMax(&sums->max_abs_bits, static_cast<unsigned long long>(__double_as_longlong(s_max[0])));
    atomicAdd(&sums->nonfinite, s_nf[0]);
  }
}

unsigned blocks_for(std::int64_t work) {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const std::int64_t wanted = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, sms * 8)));
}

}  // namespace

void generate_normal_on_device(void* dst, DType t, std::int64_t n, std::uint64_t key, cudaStream_t stream) {
  if (n <= 0) return;
  const unsigned blocks = blocks_for((n + 1) / 2);
  switch (t) {
    case DType::fp16:
      normal_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__half*>(dst), n, key);
      break;
    case DType::bf16:
      normal_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(dst), n, key);
      break;
    case DType::fp32:
      normal_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(dst), n, key);
      break;
  }
  ATTN_CUDA_CHECK(cudaGetLastError());
}

void widen_to_fp32_on_device(const void* src, DType t, float* dst, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const unsigned blocks = blocks_for(n);
  switch (t) {
    case DType::fp16:
      widen_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const __half*>(src), dst, n);
      break;
    case DType::bf16:
      widen_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(src), dst, n);
      break;
    case DType::fp32:
      widen_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float*>(src), dst, n);
      break;
  }
  ATTN_CUDA_CHECK(cudaGetLastError());
}

ErrorStats compare_on_device(const void* out, DType t, const float* ref, std::int64_t n,
                             cudaStream_t stream) {
  DeviceBuffer sums_dev(sizeof(Sums));
  ATTN_CUDA_CHECK(cudaMemsetAsync(sums_dev.get(), 0, sizeof(Sums), stream));
  Sums* sums = sums_dev.as<Sums>();
  if (n > 0) {
    const unsigned blocks = blocks_for(n);
    switch (t) {
      case DType::fp16:
        compare_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const __half*>(out), ref, n, sums);
        break;
      case DType::bf16:
        compare_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(out), ref, n, sums);
        break;
      case DType::fp32:
        compare_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float*>(out), ref, n, sums);
        break;
    }
    ATTN_CUDA_CHECK(cudaGetLastError());
  }
  Sums host{};
  ATTN_CUDA_CHECK(cudaMemcpyAsync(&host, sums, sizeof(Sums), cudaMemcpyDeviceToHost, stream));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream));
  ErrorStats e;
  e.nonfinite = static_cast<std::int64_t>(host.nonfinite);
  if (e.nonfinite > 0) {
    e.rel_l2 = std::numeric_limits<double>::infinity();
    e.max_abs = std::numeric_limits<double>::infinity();
  } else {
    double max_abs = 0;
    static_assert(sizeof(max_abs) == sizeof(host.max_abs_bits));
    std::memcpy(&max_abs, &host.max_abs_bits, sizeof max_abs);
    e.max_abs = max_abs;
    e.rel_l2 = host.ref2 > 0 ? std::sqrt(host.diff2 / host.ref2) : std::sqrt(host.diff2);
  }
  return e;
}

}  // namespace attn
