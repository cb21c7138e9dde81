// Host-side fp16/bf16 <-> fp32 conversion without CUDA headers, so CPU-only builds and the input
// generator agree bit for bit with what the GPU sees. Round to nearest even, as cuda_fp16 does.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/api/dtype.hpp"

namespace attn {

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = float_bits(f);
  if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x40);
  u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<std::uint16_t>(u >> 16);
}
inline float bf16_to_float(std::uint16_t h) { return bits_float(static_cast<std::uint32_t>(h) << 16); }

inline std::uint16_t float_to_fp16(float f) {
  std::uint32_t x = float_bits(f);
  std::uint32_t sign = (x >> 16) & 0x8000;
  std::uint32_t mag = x & 0x7FFFFFFF;
  if (mag > 0x7F800000) return static_cast<std::uint16_t>(sign | 0x7E00);   // NaN
  if (mag >= 0x477FF000) return static_cast<std::uint16_t>(sign | 0x7C00);  // overflow -> inf
  if (mag < 0x38800000) {
    // fp16 subnormal or zero: the value in units of 2^-24 is exact in float, so rint rounds it
    // to nearest even under the default rounding mode.
    const float units = bits_float(mag) * 16777216.0f;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(units)));
  }
  std::uint32_t r = mag - 0x38000000;  // rebias exponent 127 -> 15
  std::uint32_t lsb = (r >> 13) & 1;
  r += 0xFFF + lsb;
  return static_cast<std::uint16_t>(sign | (r >> 13));
}

inline float fp16_to_float(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  std::uint32_t exp = (h >> 10) & 0x1F;
  std::uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7F800000 | (mant << 13));
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

// Round a float to the nearest value representable in `t` (identity for fp32).
inline float round_to(DType t, float f) {
  switch (t) {
    case DType::fp16:
      return fp16_to_float(float_to_fp16(f));
    case DType::bf16:
      return bf16_to_float(float_to_bf16(f));
    case DType::fp32:
      return f;
  }
  return f;
}

}  // namespace attn
