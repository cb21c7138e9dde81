// fa3.wgmma instantiation: D=64, fp16, the head dim's compiled tiles (one head dim and dtype a
// translation unit keeps the cold build parallel).
#include "kernels/fa3/fa3_launch.cuh"

namespace attn::fa3 {
template void run_fa3<DType::fp16, 64>(const Fa3Params&, const Tile&, void*);
}  // namespace attn::fa3
