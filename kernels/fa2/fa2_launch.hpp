// fa2.mma launch interface (host-only): run_fa2<dtype, D> turns the runtime tile choice and mask
// flag into template constants. Defined in fa2_launch.cuh, instantiated once per (D, dtype) in
// inst/ (one small translation unit each), so this header only declares it and the extern templates.
#pragma once
#include "kernels/api/dtype.hpp"
#include "kernels/fa2/fa2_params.hpp"
#include "kernels/fa2/fa2_traits.hpp"

namespace attn::fa2 {

// Launches one forward pass on `stream` (a cudaStream_t). `band` selects the kernel with the
// causal/window test compiled in. Throws KernelError for tiles not compiled for D or a bad launch.
template <DType kType, int D>
void run_fa2(const Fa2Params& p, const TileConfig& tiles, bool band, void* stream);

#define ATTN_FA2_EXTERN(D)                                                                        \
  extern template void run_fa2<DType::fp16, D>(const Fa2Params&, const TileConfig&, bool, void*); \
  extern template void run_fa2<DType::bf16, D>(const Fa2Params&, const TileConfig&, bool, void*);
ATTN_FA2_EXTERN(32)
ATTN_FA2_EXTERN(64)
ATTN_FA2_EXTERN(96)
ATTN_FA2_EXTERN(128)
ATTN_FA2_EXTERN(160)
ATTN_FA2_EXTERN(192)
ATTN_FA2_EXTERN(224)
ATTN_FA2_EXTERN(256)
#undef ATTN_FA2_EXTERN

}  // namespace attn::fa2
