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

  // Probes the current CUDA device and context and builds the config for `names`. Returns null with
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
  // ranges stored (the caller compares the rows with the launches it expects); a decode failure or
  // an evaluation error throws MetricsError. The number of passes run lands in `passes_run`.
  //
  // The profiler stays enabled between collections (a session): on an H100 (2026-11-27) the
  // first pass after enabling and configuring it cost about 0.14 s more than the next ones, and
  // an 11-pass collection of a small kernel 0.15 s in a session against 0.30 s alone. A session
  // ends when the replay mode changes, when its counter image is full, on a failure, on
  // end_session() and with the object.
  std::vector<std::map<std::string, double>> collect(const std::function<void()>& launch,
                                                     std::size_t max_kernels, bool kernel_replay,
                                                     const std::function<void()>& before_pass = {},
                                                     int* passes_run = nullptr);

  // Disables the range profiler (the next collect enables it again).
  void end_session();
  // Ranges a session's counter image holds (at least the collection's own). Enabling, the first
  // pass and disabling grow with it (H100: 0.15 s in all at 16 ranges, 0.8 s at 256), and a full
  // image ends the session.
  void set_session_ranges(std::size_t ranges) { m_session_ranges = ranges; }

 private:
  RangeProfiler() = default;
  void begin_session(bool kernel_replay, std::size_t capacity);

  std::string m_chip;
  std::vector<std::string> m_names;
  std::vector<std::uint8_t> m_config;
  int m_passes = 0;
  void* m_ctx = nullptr;     // CUcontext
  void* m_object = nullptr;  // CUpti_RangeProfiler_Object of the open session, null when none
  bool m_kernel_replay = false;
  std::vector<std::uint8_t> m_image;  // the session's counter data image
  std::size_t m_capacity = 0;         // ranges it holds
  std::size_t m_used = 0;             // ranges earlier collections of the session stored
  std::size_t m_session_ranges = 16;
};

}  // namespace attn::cupti
