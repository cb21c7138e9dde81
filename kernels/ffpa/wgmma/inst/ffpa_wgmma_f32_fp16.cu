// ffpa.wgmma instantiation: fp16 inputs, fp32 accumulation, Q resident and streamed, 1 and 2 warpgroups,
// the cluster mode, the wide (320-column) kernel, the split form.
#include "kernels/ffpa/wgmma/ffpa_wgmma_launch.cuh"

namespace attn::ffpa_wgmma {
template void run_wgmma<DType::fp16, false>(const WgmmaParams&, bool, int, Form, void*);
}  // namespace attn::ffpa_wgmma
