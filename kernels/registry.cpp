// The registry built from kernels/registry.def (one line per kernel), plus the debug kernels.
#include "kernels/registry.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <string>

namespace attn {

// The factories' declarations, from the same list as the table below.
#define ATTN_CPU_KERNEL(factory) KernelSpec factory();
#if ATTNSCOPE_HAS_CUDA
#define ATTN_CUDA_KERNEL(factory) KernelSpec factory();
#else
#define ATTN_CUDA_KERNEL(factory)
#endif
#include "kernels/registry.def"

#if ATTNSCOPE_HAS_CUDA
std::vector<KernelSpec> make_cuda_debug_specs();
#endif
std::vector<KernelSpec> make_cpu_debug_specs();

namespace {
// Filled once by register_debug_kernels(); never resized afterwards, so pointers stay valid.
std::vector<KernelSpec>& debug_registry() {
  static std::vector<KernelSpec> debug;
  return debug;
}
// Plug-in kernels (kernels/api/plugin_loader.cpp): a deque, so earlier entries never move.
std::deque<KernelSpec>& plugin_registry() {
  static std::deque<KernelSpec> plugins;
  return plugins;
}
}  // namespace

void register_plugin_kernels(std::vector<KernelSpec> specs) {
  for (KernelSpec& s : specs) plugin_registry().push_back(std::move(s));
}

void replace_plugin_kernels(std::vector<KernelSpec> specs) {
  for (KernelSpec& s : specs) {
    auto& r = plugin_registry();
    const auto it = std::find_if(r.begin(), r.end(), [&](const KernelSpec& k) { return k.id == s.id; });
    if (it != r.end())
      *it = std::move(s);
    else
      r.push_back(std::move(s));
  }
}

std::vector<const KernelSpec*> listed_kernels() {
  std::vector<const KernelSpec*> out;
  for (const KernelSpec& k : kernel_registry()) out.push_back(&k);
  for (const KernelSpec& k : plugin_registry()) out.push_back(&k);
  return out;
}

const std::vector<KernelSpec>& kernel_registry() {
  static const std::vector<KernelSpec> registry = [] {
    std::vector<KernelSpec> r;
#define ATTN_CPU_KERNEL(factory) r.push_back(factory());
#if ATTNSCOPE_HAS_CUDA
#define ATTN_CUDA_KERNEL(factory) r.push_back(factory());
#else
#define ATTN_CUDA_KERNEL(factory)
#endif
#include "kernels/registry.def"
    return r;
  }();
  return registry;
}

const KernelSpec* find_kernel(std::string_view id) {
  for (const auto& k : kernel_registry())
    if (k.id == id) return &k;
  for (const auto& k : debug_registry())
    if (k.id == id) return &k;
  for (const auto& k : plugin_registry())
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
