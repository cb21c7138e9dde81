// fa2.mma's backward at head dims 160, 192, 224 and 256 (fa2_backward_kernel.cuh: 64-key blocks),
// instantiated apart from 32-128 to keep each translation unit's build short.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/fa2/fa2_backward_kernel.cuh"

namespace attn::fa2::bwd {

#define ATTN_FA2_BWD_WIDE(D)                                                            \
  template void launch<__half, D>(const Problem&, const BwdParams&, int, cudaStream_t); \
  template void launch<__nv_bfloat16, D>(const Problem&, const BwdParams&, int, cudaStream_t);
ATTN_FA2_BWD_WIDE(160)
ATTN_FA2_BWD_WIDE(192)
ATTN_FA2_BWD_WIDE(224)
ATTN_FA2_BWD_WIDE(256)
#undef ATTN_FA2_BWD_WIDE

}  // namespace attn::fa2::bwd
