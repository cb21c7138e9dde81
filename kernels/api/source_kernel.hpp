// Kernel sources (--kernel-source FILE.cu): a .cu file following include/attnscope/kernel_source.h,
// compiled with NVRTC per configuration and registered like a plug-in's kernel (plugin_loader.hpp).
#pragma once
#include <string>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/nvrtc_compiler.hpp"
#include "kernels/api/source_directives.hpp"

namespace attn {

// Whether `path` names a kernel source (a .cu file) rather than a plug-in library.
bool is_kernel_source(const std::string& path);

// The registry entry of the kernel `path` (absolute) declares. Throws PluginError for a file that
// cannot be read or whose directives are wrong.
KernelSpec kernel_source_spec(const std::string& path, SourceDirectives& directives);

// What one case compiles: `-DATTN_HEAD_DIM=...` and friends for problem `p` and `knobs`, for `arch`.
SourceBuild source_build(const std::string& path, const SourceDirectives& d, const Problem& p,
                         const Knobs& knobs, const std::string& arch);

// The launch the compiled source states (ATTN_LAUNCH). Throws PluginError naming `path` when the
// cubin has no attnscope_launch or states a zero thread or row count.
struct SourceLaunch {
  int threads = 0, rows_per_block = 0, smem_bytes = 0;
};
SourceLaunch source_launch(const CompiledSource& compiled, const std::string& path);

// The architecture kernel sources are compiled for in this process: $ATTNSCOPE_NVRTC_ARCH, else the
// current CUDA device's (nvrtc_arch()), else sm_90a when there is no device (planning elsewhere).
std::string source_arch();

}  // namespace attn
