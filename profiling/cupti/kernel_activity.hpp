// Launch statistics of every kernel a case launches (ours, cuBLAS, cuDNN) from CUPTI activity
// records: name, grid, block, registers, static/dynamic shared memory, local memory, carve-out;
// theoretical occupancy from profiling/launch_stats.hpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "profiling/launch_stats.hpp"
#include "profiling/result.hpp"

namespace attn::cupti {

class KernelActivity {
 public:
  // Null with `unavailable` set when CUPTI cannot be loaded or refuses the activity callbacks.
  static std::unique_ptr<KernelActivity> create(const SmLimits& limits, std::string& unavailable);
  ~KernelActivity();
  KernelActivity(const KernelActivity&) = delete;
  KernelActivity& operator=(const KernelActivity&) = delete;

  // Between begin() and end() every kernel launch is recorded; end() synchronizes the device,
  // flushes CUPTI's buffers and returns the launches in start order. Throws std::runtime_error
  // when CUPTI fails.
  void begin();
  std::vector<LaunchStats> end();

 private:
  KernelActivity() = default;
  SmLimits m_limits;
  bool m_active = false;
};

}  // namespace attn::cupti
