// One line per kernel. Each factory lives in its kernel's own source file.
#include "kernels/registry.hpp"

#include <stdexcept>
#include <string>

namespace attn {

KernelSpec make_cpu_reference_spec();
KernelSpec make_cpu_flash_spec();
#if ATTNSCOPE_HAS_CUDA
KernelSpec make_cuda_reference_spec();
KernelSpec make_naive_unfused_spec();
KernelSpec make_cublas_unfused_spec();
KernelSpec make_cudnn_sdpa_spec();
KernelSpec make_fa2_mma_spec();
KernelSpec make_ffpa_l1_acc_f32_spec();
KernelSpec make_ffpa_l1_acc_f16_spec();
KernelSpec make_ffpa_wgmma_acc_f32_spec();
KernelSpec make_ffpa_wgmma_acc_f16_spec();
std::vector<KernelSpec> make_cuda_debug_specs();
#endif
std::vector<KernelSpec> make_cpu_debug_specs();

namespace {
// Filled once by register_debug_kernels(); never resized afterwards, so pointers stay valid.
std::vector<KernelSpec>& debug_registry() {
  static std::vector<KernelSpec> debug;
  return debug;
}
}  // namespace

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
    r.push_back(make_fa2_mma_spec());
    r.push_back(make_ffpa_l1_acc_f32_spec());
    r.push_back(make_ffpa_l1_acc_f16_spec());
    r.push_back(make_ffpa_wgmma_acc_f32_spec());
    r.push_back(make_ffpa_wgmma_acc_f16_spec());
#endif
    return r;
  }();
  return registry;
}

const KernelSpec* find_kernel(std::string_view id) {
  for (const auto& k : kernel_registry())
    if (k.id == id) return &k;
  for (const auto& k : debug_registry())
    if (k.id == id) return &k;
  return nullptr;
}

void register_debug_kernels(Backend backend) {
  std::vector<KernelSpec>& debug = debug_registry();
  if (!debug.empty()) {
    if (debug.front().backend == backend) return;
    throw std::logic_error("register_debug_kernels: already registered for the " +
                           std::string(to_string(debug.front().backend)) + " backend");
  }
#if ATTNSCOPE_HAS_CUDA
  if (backend == Backend::cuda) {
    debug = make_cuda_debug_specs();
    return;
  }
#else
  if (backend == Backend::cuda)
    throw std::logic_error("register_debug_kernels: this attnscope was built without CUDA");
#endif
  debug = make_cpu_debug_specs();
}

bool debug_kernels_registered() { return !debug_registry().empty(); }

bool built_with_cuda() { return ATTNSCOPE_HAS_CUDA != 0; }

}  // namespace attn
