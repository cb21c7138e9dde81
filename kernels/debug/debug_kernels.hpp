// Shared by the CPU and CUDA variants of the debug kernels (debug_cpu.cpp, debug_cuda.cu).
#pragma once
#include <cstddef>

namespace attn {

// debug.oom's workspace [bytes]: 1 EiB, beyond any host's address space and any GPU's memory, so
// the allocation fails at once instead of paging or waking the OOM killer.
inline constexpr std::size_t kDebugOomBytes = std::size_t{1} << 60;

}  // namespace attn
