// The CUDA example plug-in (docs/plugins.md): examples/kernel-source/tiled_attention.cu's kernel,
// built ahead of time by nvcc and handed to attnscope through the C ABI (include/attnscope/plugin.h).
// Same device code as `--kernel-source examples/kernel-source/tiled_attention.cu`, so the two time
// alike; this file is the host half a plug-in needs: why_not, prepare, run, destroy.
//
//   nvcc -O3 -arch=sm_90a -shared -Xcompiler -fPIC -I<attnscope>/include cuda_tiled.cu -o libtiled.so
//   attnscope run --plugin ./libtiled.so --kernels example.tiled_mma,cudnn.sdpa --head-dim 64,128
#include <cuda_runtime.h>

#include <new>

#include "../kernel-source/tiled_attention.cu"

namespace {

template <int D, bool Bf16>
__global__ void __launch_bounds__(tiled::kThreads, tiled::min_blocks(D))
    tiled_entry(attn_args args, attn_problem p) {
  tiled::attention<D, Bf16>(args, p);
}

struct State {
  attn_problem problem;
  void (*kernel)(attn_args, attn_problem);
};

template <int D, bool Bf16>
void (*entry())(attn_args, attn_problem) {
  return tiled_entry<D, Bf16>;
}

const char* why_not(const attn_problem* p, const attn_knob*, int32_t) {
  if (p->dtype != ATTN_DTYPE_FP16 && p->dtype != ATTN_DTYPE_BF16) return "dtype must be fp16 or bf16";
  if (p->head_dim != 64 && p->head_dim != 128) return "head_dim must be 64 or 128";
  if (p->head_dim_v != p->head_dim) return "head_dim_v must equal head_dim";
  if (p->q_strides[3] != 1 || p->k_strides[3] != 1 || p->v_strides[3] != 1 || p->o_strides[3] != 1)
    return "layout: the head dim must be contiguous";
  if (p->heads_q > 65535 || p->batch > 65535) return "heads_q and batch must be at most 65535";
  return nullptr;
}

int prepare(const attn_problem* p, const attn_knob*, int32_t, void** state, const char** error) {
  State* s = new (std::nothrow) State{*p, nullptr};
  if (!s) {
    *error = "out of host memory";
    return 1;
  }
  const bool bf16 = p->dtype == ATTN_DTYPE_BF16;
  s->kernel = p->head_dim == 64 ? (bf16 ? entry<64, true>() : entry<64, false>())
                                : (bf16 ? entry<128, true>() : entry<128, false>());
  *state = s;
  return 0;
}

int run(void* state, const attn_args* args, const char** error) {
  const State& s = *static_cast<const State*>(state);
  const dim3 grid(static_cast<unsigned>((s.problem.seq_q + tiled::kRows - 1) / tiled::kRows),
                  static_cast<unsigned>(s.problem.heads_q), static_cast<unsigned>(s.problem.batch));
  s.kernel<<<grid, tiled::kThreads, tiled::smem_bytes(static_cast<int>(s.problem.head_dim)),
             static_cast<cudaStream_t>(args->stream)>>>(*args, s.problem);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    *error = cudaGetErrorString(e);
    return 1;
  }
  return 0;
}

void destroy(void* state) { delete static_cast<State*>(state); }

const attn_kernel kKernels[] = {{
    "example.tiled_mma",
    "tiled tensor-core forward (mma.sync m16n8k16, 64x64 tiles), a CUDA plug-in",
    ATTN_BACKEND_CUDA,
    nullptr,
    0,
    1,
    why_not,
    prepare,
    run,
    destroy,
    nullptr,
    0.0,
}};

const attn_plugin kPlugin = {ATTNSCOPE_PLUGIN_ABI_VERSION, "attnscope CUDA example", 1, kKernels, nullptr};

}  // namespace

extern "C" const attn_plugin* attnscope_plugin(void) { return &kPlugin; }
