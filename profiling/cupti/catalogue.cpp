// Up-front check of --metrics names against GPU 0's chip catalogue (see metrics.hpp). It runs in
// the supervisor, which must not create a CUDA context (nor call CUPTI's device functions, which
// crashed there without one): the chip is named from the compute capability instead.
#include <cuda_runtime_api.h>

#include "profiling/cupti/cupti_api.hpp"
#include "profiling/cupti/range_profiler.hpp"
#include "profiling/metrics.hpp"

namespace attn {

namespace {
// CUPTI's chip name for a compute capability, where one chip's catalogue stands for it; empty
// where unknown (then only the worker checks).
std::string chip_for(int major, int minor) {
  const int cc = major * 10 + minor;
  switch (cc) {
    case 70:
      return "GV100";
    case 75:
      return "TU102";
    case 80:
      return "GA100";
    case 86:
      return "GA102";
    case 87:
      return "GA10B";
    case 89:
      return "AD102";
    case 90:
      return "GH100";
    case 100:
      return "GB100";
    case 120:
      return "GB202";
    default:
      return {};
  }
}
}  // namespace

std::string metric_catalogue_problem(const std::vector<std::string>& names) {
  if (names.empty() || !cupti::api()) return {};
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  const std::string chip = chip_for(major, minor);
  if (chip.empty()) return {};
  try {
    return cupti::first_unknown_metric(chip, names);
  } catch (const cupti::MetricsError&) {
    return {};  // the host API is not usable here; the engine reports metrics as unavailable
  }
}

}  // namespace attn
