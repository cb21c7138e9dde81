// Device element types for DType (fp16 -> __half, bf16 -> __nv_bfloat16, fp32 -> float), their
// fp32 conversions, and the one host switch that turns a runtime DType into a template argument.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <type_traits>

#include "kernels/api/dtype.hpp"
#include "kernels/api/kernel_spec.hpp"

namespace attn {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// Calls f(std::type_identity<T>{}) with T the device element type of `t`.
template <typename F>
void dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::fp16:
      f(std::type_identity<__half>{});
      return;
    case DType::bf16:
      f(std::type_identity<__nv_bfloat16>{});
      return;
    case DType::fp32:
      f(std::type_identity<float>{});
      return;
  }
  throw KernelError("dispatch_dtype: unknown dtype " + std::to_string(static_cast<int>(t)));
}

}  // namespace attn
