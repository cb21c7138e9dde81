// Failure classification of a case (see failure.hpp).
#include "profiling/cuda/failure.hpp"

#include <fmt/format.h>

#include "profiling/cuda/cuda_status.hpp"

namespace attn {

namespace {
std::string mib(std::size_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}
}  // namespace

FailureVerdict classify_failure(const std::string& label, const std::string& what, bool oom) {
  FailureVerdict v;
  const cudaError_t sync = cudaDeviceSynchronize();
  const cudaError_t last = cudaGetLastError();
  const cudaError_t sticky = is_sticky(sync) ? sync : (is_sticky(last) ? last : cudaSuccess);
  if (sticky != cudaSuccess) {
    v.status = Status::fault;
    v.reason = fmt::format("{}: {}", cudaGetErrorName(sticky), what);
    v.context_lost = fmt::format("{} in {}", cudaGetErrorName(sticky), label);
    return v;
  }
  // cuDNN and cuBLAS say out-of-memory in their own words.
  if (oom || what.find("ALLOC_FAILED") != std::string::npos ||
      what.find("out of memory") != std::string::npos) {
    std::size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    v.status = Status::oom;
    v.reason = fmt::format("{} (device has {} free of {})", what, mib(free_b), mib(total_b));
    return v;
  }
  v.reason = what;
  return v;
}

}  // namespace attn
