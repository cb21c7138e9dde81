// Element types attnscope sweeps over, and their host-side names and sizes.
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace attn {

enum class DType { fp16, bf16, fp32 };

constexpr std::string_view to_string(DType t) {
  switch (t) {
    case DType::fp16:
      return "fp16";
    case DType::bf16:
      return "bf16";
    case DType::fp32:
      return "fp32";
  }
  return "?";
}

constexpr std::size_t dtype_bytes(DType t) { return t == DType::fp32 ? 4 : 2; }

inline std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp16" || s == "float16" || s == "half") return DType::fp16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  if (s == "fp32" || s == "float32" || s == "float") return DType::fp32;
  return std::nullopt;
}

enum class Backend { cpu, cuda };

constexpr std::string_view to_string(Backend b) { return b == Backend::cpu ? "cpu" : "cuda"; }

inline std::optional<Backend> parse_backend(std::string_view s) {
  if (s == "cpu") return Backend::cpu;
  if (s == "cuda" || s == "gpu") return Backend::cuda;
  return std::nullopt;
}

}  // namespace attn
