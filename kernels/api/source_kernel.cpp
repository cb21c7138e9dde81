// Kernel sources as registry entries (source_kernel.hpp).
#include "kernels/api/source_kernel.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "kernels/api/cubin_symbols.hpp"
#include "kernels/api/plugin_abi.hpp"

#if ATTNSCOPE_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace attn {

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

#if ATTNSCOPE_HAS_CUDA
void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw KernelError(what + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

// A compiled source loaded once per process (a cudaLibrary_t is context-independent).
struct LoadedSource {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
};

LoadedSource load(const CompiledSource& c, const std::string& path, const std::string& entry,
                  int smem_bytes) {
  static std::mutex mutex;
  static std::map<std::string, LoadedSource> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string key = c.key + "/" + entry;
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;
  LoadedSource s;
  check(cudaLibraryLoadData(&s.library, c.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        path + ": loading the compiled module");
  if (cudaLibraryGetKernel(&s.kernel, s.library, entry.c_str()) != cudaSuccess) {
    (void)cudaGetLastError();
    throw KernelError(path + ": the compiled module has no kernel '" + entry +
                      "'; expected extern \"C\" __global__ void " + entry +
                      "(attn_args, attn_problem) (or name yours with '// @attnscope entry: NAME')");
  }
  // Above 48 KiB, dynamic shared memory must be asked for.
  if (smem_bytes > 48 * 1024)
    check(cudaFuncSetAttribute(reinterpret_cast<const void*>(s.kernel),
                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes),
          path + ": " + std::to_string(smem_bytes) + " bytes of dynamic shared memory (ATTN_LAUNCH)");
  return loaded.emplace(key, s).first->second;
}

class SourceKernel final : public PreparedKernel {
 public:
  SourceKernel(const Problem& p, LoadedSource s, SourceLaunch launch, bool writes_lse, std::string id)
      : m_problem(to_abi(p)), m_source(s), m_launch(launch), m_writes_lse(writes_lse), m_id(std::move(id)) {
    m_grid = dim3(static_cast<unsigned>((p.seq_q + launch.rows_per_block - 1) / launch.rows_per_block),
                  static_cast<unsigned>(p.heads_q), static_cast<unsigned>(p.batch));
  }
  bool writes_lse() const override { return m_writes_lse; }
  void run(const AttentionArgs& a) override {
    attn_args args{a.q,     a.k, a.v, a.o, m_writes_lse ? a.lse : nullptr, a.workspace, a.workspace_bytes,
                   a.stream};
    void* params[] = {&args, &m_problem};
    check(
        cudaLaunchKernel(reinterpret_cast<const void*>(m_source.kernel), m_grid,
                         dim3(static_cast<unsigned>(m_launch.threads)), params,
                         static_cast<std::size_t>(m_launch.smem_bytes), static_cast<cudaStream_t>(a.stream)),
        m_id + ": launch");
  }

 private:
  attn_problem m_problem;
  LoadedSource m_source;
  SourceLaunch m_launch;
  dim3 m_grid;
  bool m_writes_lse;
  std::string m_id;
};
#endif

}  // namespace

bool is_kernel_source(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".cu") == 0;
}

std::string source_arch() {
  if (const char* a = std::getenv("ATTNSCOPE_NVRTC_ARCH"); a && *a) return a;
#if ATTNSCOPE_HAS_CUDA
  // Planning asks once per case; the device's answer does not change.
  static std::mutex mutex;
  static std::map<int, std::string> by_device;
  int count = 0, device = 0, major = 0, minor = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0 && cudaGetDevice(&device) == cudaSuccess) {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = by_device.find(device); it != by_device.end()) return it->second;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess)
      return by_device[device] = nvrtc_arch(major, minor);
  }
  (void)cudaGetLastError();
#endif
  return "sm_90a";
}

SourceBuild source_build(const std::string& path, const SourceDirectives& d, const Problem& p,
                         const Knobs& knobs, const std::string& arch) {
  SourceBuild b;
  b.path = path;
  b.arch = arch;
  b.options = d.options;
  for (const std::string& dir : d.include_dirs)
    b.include_dirs.push_back((std::filesystem::path(path).parent_path() / dir).lexically_normal().string());
  b.defines = {{"ATTN_HEAD_DIM", std::to_string(p.head_dim)},
               {"ATTN_HEAD_DIM_V", std::to_string(p.head_dim_v)},
               {"ATTN_DTYPE", "ATTN_" + upper(std::string(to_string(p.dtype)))}};
  for (const KnobSpec& k : d.knobs) {
    const int v = knob_value(knobs, k.name);
    b.defines.emplace_back("ATTN_KNOB_" + upper(k.name), std::to_string(v == 0 ? k.default_value : v));
  }
  return b;
}

SourceLaunch source_launch(const CompiledSource& compiled, const std::string& path) {
  std::optional<std::string> bytes;
  try {
    bytes = cubin_symbol_bytes(compiled.cubin, "attnscope_launch");
  } catch (const std::exception& e) {
    throw PluginError(path + ": " + e.what());
  }
  if (!bytes || bytes->size() < 3 * sizeof(int32_t))
    throw PluginError(path +
                      ": no ATTN_LAUNCH(threads, rows_per_block, smem_bytes) at file scope; a kernel "
                      "source states its launch (include/attnscope/kernel_source.h)");
  int32_t v[3];
  std::memcpy(v, bytes->data(), sizeof v);
  if (v[0] < 1 || v[0] > 1024 || v[1] < 1 || v[2] < 0)
    throw PluginError(path + ": ATTN_LAUNCH(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " +
                      std::to_string(v[2]) +
                      "): expected 1..1024 threads, at least one row per block and "
                      "non-negative shared memory");
  return {v[0], v[1], v[2]};
}

KernelSpec kernel_source_spec(const std::string& path, SourceDirectives& directives) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PluginError(path + ": cannot read the kernel source");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    directives = parse_source_directives(text.str(), path);
  } catch (const SourceDirectiveError& e) {
    throw PluginError(e.what());
  }
  auto d = std::make_shared<const SourceDirectives>(directives);
  KernelSpec s;
  s.id = d->id;
  s.description = d->description;
  s.backend = Backend::cuda;
  s.knobs = d->knobs;
  // Planning compiles each configuration: the source refuses what it does not take with
  // `#error attnscope-unsupported: ...` (a skip); any other compile error stops the run.
  s.why_not = [d, path](const Problem& p, const Knobs& knobs) -> std::string {
    if (p.heads_q > 65535 || p.batch > 65535)
      return "heads_q and batch must be at most 65535 (grid.y and grid.z of a kernel source)";
    try {
      const CompiledSource c = compile_source(source_build(path, *d, p, knobs, source_arch()));
      (void)source_launch(c, path);
    } catch (const SourceCompileError& e) {
      if (!e.unsupported().empty()) return e.unsupported();
      throw;
    }
    return {};
  };
  s.prepare = [d, path](const Problem& p, const Knobs& knobs) -> std::unique_ptr<PreparedKernel> {
#if ATTNSCOPE_HAS_CUDA
    CompiledSource c;
    try {
      c = compile_source(source_build(path, *d, p, knobs, source_arch()));
    } catch (const SourceCompileError& e) {
      if (!e.unsupported().empty()) throw Unsupported(e.unsupported());
      throw KernelError(e.what());
    } catch (const PluginError& e) {
      throw KernelError(e.what());
    }
    SourceLaunch launch;
    try {
      launch = source_launch(c, path);
    } catch (const PluginError& e) {
      throw KernelError(e.what());
    }
    return std::make_unique<SourceKernel>(p, load(c, path, d->entry, launch.smem_bytes), launch,
                                          d->writes_lse, d->id);
#else
    (void)p, (void)knobs;
    throw KernelError(path + ": this attnscope was built without CUDA; kernel sources need it");
#endif
  };
  if (d->stated_rel_l2 > 0) {
    const double rel = d->stated_rel_l2;
    s.stated_bound = [rel](const Problem&) {
      return StatedBound{rel, 8 * rel, "stated by the kernel source"};
    };
  }
  return s;
}

}  // namespace attn
