// CUPTI Range Profiler (target) + Profiler Host (config, evaluation) for one GPU: the probe that
// decides whether metrics are available, up-front validation of metric names against the chip's
// catalogue, and per-case collection with auto range + kernel replay (one range per kernel; CUPTI
// saves and restores device memory between passes, so the case's buffers come out unchanged).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn::cupti {

// A metric name the chip's catalogue does not have, or a CUPTI failure while collecting.
class MetricsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Host-only (no GPU, no driver): the first of `names` that CUPTI's host API rejects for `chip`
// ("GH100", ...), with the reason; empty when all are valid. Each suspect name is tried on its own
// throwaway host object, since one bad name poisons the object it was added to. Throws
// MetricsError when CUPTI cannot be loaded or does not know the chip.
std::string first_unknown_metric(const std::string& chip, const std::vector<std::string>& names);

// Host-only: replay passes per kernel for `names` on `chip`.
int count_passes(const std::string& chip, const std::vector<std::string>& names);

class RangeProfiler {
 public:
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  // Probes CUDA device 0 (current context) and builds the config for `names`. Returns null with
  // `unavailable` set (reason and fix) when counters cannot be collected here; throws
  // MetricsError naming the metric when a name is not in the chip's catalogue.
  // `code` receives the CUPTI result of the failing call (0 when the failure was not CUPTI's).
  static std::unique_ptr<RangeProfiler> create(const std::vector<std::string>& names,
                                               std::string& unavailable, int* code = nullptr);

  const std::string& chip() const { return m_chip; }
  int passes() const { return m_passes; }
  const std::vector<std::string>& names() const { return m_names; }

  // Runs `launch` (which enqueues the case's kernels) once per replay pass under auto range and
  // returns the metric values of each kernel, in launch order; `before_pass` runs before each
  // pass, outside the profiled range (the caller's cold-cache reset). `max_kernels` bounds the
  // ranges stored; more launches than that, a decode failure, or an evaluation error throw
  // MetricsError. The number of passes run lands in `passes_run` when given.
  std::vector<std::map<std::string, double>> collect(const std::function<void()>& launch,
                                                     std::size_t max_kernels, bool kernel_replay,
                                                     const std::function<void()>& before_pass = {},
                                                     int* passes_run = nullptr);

 private:
  RangeProfiler() = default;
  std::string m_chip;
  std::vector<std::string> m_names;
  std::vector<std::uint8_t> m_config;
  int m_passes = 0;
  void* m_ctx = nullptr;  // CUcontext
};

}  // namespace attn::cupti
