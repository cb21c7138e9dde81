// NVML, loaded at run time (libnvidia-ml.so.1 ships with the driver, so a build linked against it
// would not even start on a machine without one): clocks, temperature, power, throttle reasons.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "profiling/result.hpp"

namespace attn {

struct NvmlReading {
  std::optional<double> sm_mhz, mem_mhz, temp_c, power_w;
  std::optional<std::uint64_t> throttle_reasons;  // NVML clock-event bitmask
};

class Nvml {
 public:
  // Null when the library or the device is not available; why_not says which.
  static Nvml* instance(std::string* why_not = nullptr);
  std::string driver_version() const;
  std::optional<double> max_sm_clock_mhz(const std::string& pci_bus_id) const;
  NvmlReading read(const std::string& pci_bus_id) const;

 private:
  Nvml() = default;
  struct Api;
  Api* m_api = nullptr;
};

// Samples NVML every `period_ms` on a background thread between start() and stop(); stop()
// returns the mean of each field and flags clocks that dropped below 90% of the first reading.
class ClockSampler {
 public:
  ClockSampler(std::string pci_bus_id, int period_ms = 20);
  ~ClockSampler();
  void start();
  struct Summary {
    Clocks mean;
    bool clocks_dropped = false;
    std::uint64_t throttle_reasons = 0;  // OR of the reasons seen, idle/app-setting bits excluded
    std::optional<double> sm_mhz_min;    // lowest SM clock sampled [MHz]
  };
  Summary stop();

 private:
  std::string m_bus;
  int m_period_ms;
  std::atomic<bool> m_running{false};
  std::mutex m_mutex;  // guards m_readings while the thread runs, and the wake-up
  std::condition_variable m_wake;
  std::thread m_thread;
  std::vector<NvmlReading> m_readings;
};

}  // namespace attn
