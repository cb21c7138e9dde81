// A CUDA plug-in whose kernel writes far outside O: the case must end as `fault` and the sweep go on
// (tests/gpu, docs/VALIDATION.md).
#include <cuda_runtime.h>

#include "attnscope/plugin.h"

namespace {

__global__ void write_out_of_bounds(unsigned short* o) { o[(1ull << 40) + threadIdx.x] = 1; }

const char* why_not(const attn_problem*, const attn_knob*, int32_t) { return nullptr; }
int prepare(const attn_problem*, const attn_knob*, int32_t, void** state, const char**) {
  *state = nullptr;
  return 0;
}
int run(void*, const attn_args* args, const char** error) {
  write_out_of_bounds<<<1, 32, 0, static_cast<cudaStream_t>(args->stream)>>>(
      static_cast<unsigned short*>(args->o));
  if (cudaGetLastError() != cudaSuccess) {
    *error = "launch failed";
    return 1;
  }
  return 0;
}
void destroy(void*) {}

const attn_kernel kKernels[] = {{"bad.oob", "writes 2 TiB past O", ATTN_BACKEND_CUDA, nullptr, 0, 0, why_not,
                                 prepare, run, destroy, nullptr, 0.0}};
const attn_plugin kPlugin = {ATTNSCOPE_PLUGIN_ABI_VERSION, "out-of-bounds test plug-in", 1, kKernels,
                             nullptr};

}  // namespace

extern "C" const attn_plugin* attnscope_plugin(void) { return &kPlugin; }
