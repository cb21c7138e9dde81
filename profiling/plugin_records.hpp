// The run record's `plugins`: every plug-in library and kernel source loaded in this process
// (kernels/api/plugin_loader.hpp), as results name them.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "profiling/result.hpp"

namespace attn {

std::vector<PluginRecord> loaded_plugin_records();

// A case record's kernel_origin for `kernel_id` (result.hpp); empty for a built-in kernel.
std::string kernel_origin(std::string_view kernel_id);

}  // namespace attn
