// ffpa.wgmma instantiation: fp16 inputs, fp16 accumulation, Q resident and streamed, 1 and 2 warpgroups,
// the cluster mode, the wide (640-column) kernel, the split form.
#include "kernels/ffpa/wgmma/ffpa_wgmma_launch.cuh"

namespace attn::ffpa_wgmma {
template void run_wgmma<DType::fp16, true>(const WgmmaParams&, bool, int, Form, void*);
}  // namespace attn::ffpa_wgmma
