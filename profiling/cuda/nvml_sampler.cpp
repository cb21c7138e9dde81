// dlopen-based NVML binding: only the handful of calls attnscope reads.
#include "profiling/cuda/nvml_sampler.hpp"

#include <dlfcn.h>

#include <chrono>
#include <mutex>

namespace attn {

namespace {
using nvmlDevice = void*;
constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2, kNvmlTemperatureGpu = 0;
// Idle (0x1) and application-clock setting (0x2) are not throttling caused by the run.
constexpr std::uint64_t kIgnoredReasons = 0x1 | 0x2;
}  // namespace

struct Nvml::Api {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*by_bus)(const char*, nvmlDevice*) = nullptr;
  int (*clock)(nvmlDevice, int, unsigned*) = nullptr;
  int (*max_clock)(nvmlDevice, int, unsigned*) = nullptr;
  int (*temperature)(nvmlDevice, int, unsigned*) = nullptr;
  int (*power)(nvmlDevice, unsigned*) = nullptr;
  int (*reasons)(nvmlDevice, unsigned long long*) = nullptr;
  int (*driver)(char*, unsigned) = nullptr;
};

Nvml* Nvml::instance(std::string* why_not) {
  static std::once_flag once;
  static Nvml* nvml = nullptr;
  static std::string reason;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      reason = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
      return;
    }
    auto* api = new Api;
    api->lib = lib;
    auto sym = [&](const char* name) { return dlsym(lib, name); };
    api->init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
    api->by_bus =
        reinterpret_cast<int (*)(const char*, nvmlDevice*)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    api->clock = reinterpret_cast<int (*)(nvmlDevice, int, unsigned*)>(sym("nvmlDeviceGetClockInfo"));
    api->max_clock = reinterpret_cast<int (*)(nvmlDevice, int, unsigned*)>(sym("nvmlDeviceGetMaxClockInfo"));
    api->temperature = reinterpret_cast<int (*)(nvmlDevice, int, unsigned*)>(sym("nvmlDeviceGetTemperature"));
    api->power = reinterpret_cast<int (*)(nvmlDevice, unsigned*)>(sym("nvmlDeviceGetPowerUsage"));
    void* r = sym("nvmlDeviceGetCurrentClocksEventReasons");
    if (!r) r = sym("nvmlDeviceGetCurrentClocksThrottleReasons");
    api->reasons = reinterpret_cast<int (*)(nvmlDevice, unsigned long long*)>(r);
    api->driver = reinterpret_cast<int (*)(char*, unsigned)>(sym("nvmlSystemGetDriverVersion"));
    if (!api->init || !api->by_bus || api->init() != 0) {
      reason = "nvmlInit failed";
      delete api;
      return;
    }
    nvml = new Nvml;
    nvml->m_api = api;
  });
  if (!nvml && why_not) *why_not = reason;
  return nvml;
}

std::string Nvml::driver_version() const {
  char buf[96] = {};
  if (m_api->driver && m_api->driver(buf, sizeof buf) == 0) return buf;
  return {};
}

std::optional<double> Nvml::max_sm_clock_mhz(const std::string& bus) const {
  nvmlDevice dev = nullptr;
  unsigned v = 0;
  if (m_api->by_bus(bus.c_str(), &dev) != 0 || !m_api->max_clock) return std::nullopt;
  if (m_api->max_clock(dev, kNvmlClockSm, &v) != 0) return std::nullopt;
  return v;
}

NvmlReading Nvml::read(const std::string& bus) const {
  NvmlReading r;
  nvmlDevice dev = nullptr;
  if (m_api->by_bus(bus.c_str(), &dev) != 0) return r;
  unsigned v = 0;
  if (m_api->clock && m_api->clock(dev, kNvmlClockSm, &v) == 0) r.sm_mhz = v;
  if (m_api->clock && m_api->clock(dev, kNvmlClockMem, &v) == 0) r.mem_mhz = v;
  if (m_api->temperature && m_api->temperature(dev, kNvmlTemperatureGpu, &v) == 0) r.temp_c = v;
  if (m_api->power && m_api->power(dev, &v) == 0) r.power_w = v * 1e-3;  // [mW] -> [W]
  unsigned long long reasons = 0;
  if (m_api->reasons && m_api->reasons(dev, &reasons) == 0) r.throttle_reasons = reasons;
  return r;
}

ClockSampler::ClockSampler(std::string pci_bus_id, int period_ms)
    : m_bus(std::move(pci_bus_id)), m_period_ms(period_ms) {}

ClockSampler::~ClockSampler() {
  if (m_running) stop();
}

void ClockSampler::start() {
  Nvml* nvml = Nvml::instance();
  m_readings.clear();
  if (!nvml) return;
  m_readings.push_back(nvml->read(m_bus));
  m_running = true;
  m_thread = std::thread([this, nvml] {
    std::unique_lock lock(m_mutex);
    // stop() wakes the wait at once: a sleep would hold every case up to a period (20 ms).
    while (!m_wake.wait_for(lock, std::chrono::milliseconds(m_period_ms), [this] { return !m_running; }))
      m_readings.push_back(nvml->read(m_bus));
  });
}

ClockSampler::Summary ClockSampler::stop() {
  Summary s;
  if (m_running) {
    {
      std::lock_guard lock(m_mutex);
      m_running = false;
    }
    m_wake.notify_all();
    m_thread.join();
    if (Nvml* nvml = Nvml::instance()) m_readings.push_back(nvml->read(m_bus));
  }
  if (m_readings.empty()) return s;
  auto mean_of = [&](auto field) -> std::optional<double> {
    double sum = 0;
    int n = 0;
    for (const auto& r : m_readings)
      if (auto v = r.*field) {
        sum += *v;
        ++n;
      }
    return n ? std::optional<double>(sum / n) : std::nullopt;
  };
  s.mean.sm_mhz = mean_of(&NvmlReading::sm_mhz);
  s.mean.mem_mhz = mean_of(&NvmlReading::mem_mhz);
  s.mean.temp_c = mean_of(&NvmlReading::temp_c);
  s.mean.power_w = mean_of(&NvmlReading::power_w);
  const auto first = m_readings.front().sm_mhz;
  for (const auto& r : m_readings) {
    if (first && r.sm_mhz && *r.sm_mhz < 0.9 * *first) s.clocks_dropped = true;
    if (r.sm_mhz && (!s.sm_mhz_min || *r.sm_mhz < *s.sm_mhz_min)) s.sm_mhz_min = r.sm_mhz;
    if (r.throttle_reasons) s.throttle_reasons |= *r.throttle_reasons & ~kIgnoredReasons;
  }
  return s;
}

}  // namespace attn
