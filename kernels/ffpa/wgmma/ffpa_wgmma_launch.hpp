// ffpa.wgmma launch interface (host-only): run_wgmma<dtype, acc_f16> launches the sm_90a kernel
// with Q resident or streamed, 1 or 2 warpgroups a CTA, in one of the forms of ffpa_wgmma_traits.hpp
// (passes recomputing S, the wide kernels, cluster mode, the split form). Defined in
// ffpa_wgmma_launch.cuh, instantiated once per (dtype, accumulation) in inst/.
#pragma once
#include "kernels/api/dtype.hpp"
#include "kernels/ffpa/wgmma/ffpa_wgmma_params.hpp"
#include "kernels/ffpa/wgmma/ffpa_wgmma_traits.hpp"

namespace attn::ffpa_wgmma {

// Enqueues one forward pass on `stream` (a cudaStream_t); p.n_passes and p.pass_chunks set.
template <DType kType, bool kAccF16>
void run_wgmma(const WgmmaParams& p, bool q_resident, int wgs, Form form, void* stream);

extern template void run_wgmma<DType::fp16, false>(const WgmmaParams&, bool, int, Form, void*);
extern template void run_wgmma<DType::bf16, false>(const WgmmaParams&, bool, int, Form, void*);
extern template void run_wgmma<DType::fp16, true>(const WgmmaParams&, bool, int, Form, void*);

}  // namespace attn::ffpa_wgmma
