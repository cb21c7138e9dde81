// ffpa.l1 launch interface (host-only): run_ffpa<dtype, acc_f16, dmax> launches the kernel compiled
// for that head-dim capacity with its tiles (compiled_tiles()), stages 1 or 2, Q streamed or resident.
// Defined in ffpa_launch.cuh, instantiated once per (dtype, accumulation, capacity) in inst/.
#pragma once
#include "kernels/api/dtype.hpp"
#include "kernels/ffpa/ffpa_params.hpp"

namespace attn::ffpa {

// Enqueues one forward pass on `stream` (a cudaStream_t). Throws KernelError for stages not compiled.
template <DType kType, bool kAccF16, int kDMax>
void run_ffpa(const FfpaParams& p, int stages, bool q_resident, void* stream);

#define ATTN_FFPA_EXTERN(TYPE, ACC16, DMAX) \
  extern template void run_ffpa<DType::TYPE, ACC16, DMAX>(const FfpaParams&, int, bool, void*);
ATTN_FFPA_EXTERN(fp16, false, 512)
ATTN_FFPA_EXTERN(fp16, false, 1024)
ATTN_FFPA_EXTERN(bf16, false, 512)
ATTN_FFPA_EXTERN(bf16, false, 1024)
ATTN_FFPA_EXTERN(fp16, true, 512)
ATTN_FFPA_EXTERN(fp16, true, 1024)
#undef ATTN_FFPA_EXTERN

}  // namespace attn::ffpa
