// fa3.wgmma instantiation: D=256, bf16, the head dim's compiled tiles (one head dim and dtype a
// translation unit keeps the cold build parallel).
#include "kernels/fa3/fa3_launch.cuh"

namespace attn::fa3 {
template void run_fa3<DType::bf16, 256>(const Fa3Params&, const Tile&, void*);
}  // namespace attn::fa3
