// The kernel registry: every kernel attnscope can launch, in a fixed order.
#pragma once
#include <string_view>
#include <vector>

#include "kernels/api/kernel_spec.hpp"

namespace attn {

const std::vector<KernelSpec>& kernel_registry();
// Null when no kernel has this id.
const KernelSpec* find_kernel(std::string_view id);
// Whether this build carries CUDA kernels at all.
bool built_with_cuda();

// Adds the debug kernels (debug.fault, debug.hang, debug.oom, debug.wrong; kernels/debug/) of
// `backend` to what find_kernel() sees; kernel_registry() keeps listing the shipped kernels only.
// Call before planning, from one thread. Calling again with the same backend does nothing; with
// the other backend it throws std::logic_error (their ids would collide).
void register_debug_kernels(Backend backend);
bool debug_kernels_registered();

// Adds kernels of a plug-in library (kernels/api/plugin_loader.cpp calls it after checking them);
// earlier entries never move, so find_kernel()'s pointers stay valid.
void register_plugin_kernels(std::vector<KernelSpec> specs);
// A new version of a watched plug-in or kernel source (kernels/api/kernel_versions.hpp): each spec
// takes the place of the plug-in kernel with its id (pointers from find_kernel() stay valid and see
// the new version), or is added when no plug-in kernel has that id. Call only while nothing plans or
// runs a case in this process.
void replace_plugin_kernels(std::vector<KernelSpec> specs);
// The shipped kernels, then those plug-in libraries registered (kernels/api/plugin_loader.hpp) in
// load order: what a kernel list shows. find_kernel() sees both.
std::vector<const KernelSpec*> listed_kernels();

}  // namespace attn
