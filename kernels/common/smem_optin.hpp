// The dynamic shared memory a block may opt in to, per architecture (host and device constexpr), so
// that the kernels' fit checks and launch attributes share one set of numbers.
#pragma once
#include <cstddef>

namespace attn::smem {

inline constexpr std::size_t kSm90Optin = 232448;  // 227 KiB: every sm_90 GPU (H100, H200, H800)
inline constexpr std::size_t kSm80Optin = 166912;  // 163 KiB: sm_80 and sm_87
inline constexpr std::size_t kSm86Optin = 101376;  // 99 KiB: sm_86 and sm_89

// The architecture being compiled; the host's pass (no __CUDA_ARCH__) takes sm_90's.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
inline constexpr std::size_t kArchOptin =
    __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870 ? kSm80Optin : kSm86Optin;
#else
inline constexpr std::size_t kArchOptin = kSm90Optin;
#endif

}  // namespace attn::smem
