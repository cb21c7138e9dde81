// cpu.flash's backward: FlashAttention-2's loop order on the CPU in fp32, so the GPU kernels'
// algorithm has a readable, checked model.
#pragma once
#include <cstdint>

#include "kernels/api/kernel_spec.hpp"

namespace attn {

// The gradients of KV head `hk` of batch `b` (dK, dV of that head and dQ of its query heads), tiled
// br x bc, P recomputed from the forward's LSE.
void flash_backward_kv_head(const Problem& p, const BackwardArgs& a, std::int64_t br, std::int64_t bc,
                            std::int64_t b, std::int64_t hk);

}  // namespace attn
