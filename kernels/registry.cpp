// One line per kernel. Each factory lives in its kernel's own source file.
#include "kernels/registry.hpp"

namespace attn {

KernelSpec make_cpu_reference_spec();
KernelSpec make_cpu_flash_spec();
#if ATTNSCOPE_HAS_CUDA
KernelSpec make_cuda_reference_spec();
KernelSpec make_naive_unfused_spec();
KernelSpec make_cublas_unfused_spec();
KernelSpec make_cudnn_sdpa_spec();
#endif

const std::vector<KernelSpec>& kernel_registry() {
  static const std::vector<KernelSpec> registry = [] {
    std::vector<KernelSpec> r;
    r.push_back(make_cpu_reference_spec());
    r.push_back(make_cpu_flash_spec());
#if ATTNSCOPE_HAS_CUDA
    r.push_back(make_cuda_reference_spec());
    r.push_back(make_naive_unfused_spec());
    r.push_back(make_cublas_unfused_spec());
    r.push_back(make_cudnn_sdpa_spec());
#endif
    return r;
  }();
  return registry;
}

const KernelSpec* find_kernel(std::string_view id) {
  for (const auto& k : kernel_registry())
    if (k.id == id) return &k;
  return nullptr;
}

bool built_with_cuda() { return ATTNSCOPE_HAS_CUDA != 0; }

}  // namespace attn
