// The run record's `plugins`: every plug-in library and kernel source loaded in this process
// (kernels/api/plugin_loader.hpp), as results name them.
#pragma once
#include <vector>

#include "profiling/result.hpp"

namespace attn {

std::vector<PluginRecord> loaded_plugin_records();

}  // namespace attn
