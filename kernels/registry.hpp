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

}  // namespace attn
