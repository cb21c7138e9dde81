// ffpa.l1 instantiation: acc_f32, bf16, head-dim capacity 512, stages 1 and 2, Q streamed and resident.
#include "kernels/ffpa/ffpa_launch.cuh"

namespace attn::ffpa {
template void run_ffpa<DType::bf16, false, 512>(const FfpaParams&, int, bool, void*);
}  // namespace attn::ffpa
