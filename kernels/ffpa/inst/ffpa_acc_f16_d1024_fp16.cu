// ffpa.l1 instantiation: acc_f16, fp16, head-dim capacity 1024, stages 1 and 2, Q streamed and resident.
#include "kernels/ffpa/ffpa_launch.cuh"

namespace attn::ffpa {
template void run_ffpa<DType::fp16, true, 1024>(const FfpaParams&, int, bool, void*);
}  // namespace attn::ffpa
