// Reads library versions from the libraries themselves (the loaded cuDNN may differ from the
// headers attnscope was built against).
#include "kernels/library_versions.hpp"

#include <dlfcn.h>

#include <cstdint>

#if ATTNSCOPE_HAS_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#endif

namespace attn {

#if ATTNSCOPE_HAS_CUDA
namespace {
std::string major_minor(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string cupti_version() {
  // dlopen: CUPTI is optional at run time and its API version is all we need here.
  for (const char* name : {"libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                           "/usr/local/cuda/lib64/libcupti.so.13"}) {
    void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) continue;
    using GetVersion = int (*)(std::uint32_t*);
    auto fn = reinterpret_cast<GetVersion>(dlsym(lib, "cuptiGetVersion"));
    std::uint32_t v = 0;
    const bool ok = fn && fn(&v) == 0;
    dlclose(lib);
    if (ok) return std::to_string(v);
  }
  return {};
}
}  // namespace
#endif

LibraryVersions library_versions() {
  LibraryVersions v;
#if ATTNSCOPE_HAS_CUDA
  int rt = 0, drv = 0;
  if (cudaRuntimeGetVersion(&rt) == cudaSuccess) v.cuda_runtime = major_minor(rt);
  if (cudaDriverGetVersion(&drv) == cudaSuccess && drv > 0) v.cuda_driver = major_minor(drv);
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    v.cublas = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  const std::size_t dnn = cudnnGetVersion();  // 91400 for 9.14.0
  if (dnn > 0)
    v.cudnn = std::to_string(dnn / 10000) + "." + std::to_string((dnn % 10000) / 100) + "." +
              std::to_string(dnn % 100);
  v.cupti = cupti_version();
#endif
  return v;
}

}  // namespace attn
