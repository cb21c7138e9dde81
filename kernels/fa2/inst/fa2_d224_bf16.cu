// fa2.mma instantiation: D=224, bf16, every compiled tile, with and without the band mask.
#include "kernels/fa2/fa2_launch.cuh"

namespace attn::fa2 {
template void run_fa2<DType::bf16, 224>(const Fa2Params&, const TileConfig&, bool, void*);
}  // namespace attn::fa2
