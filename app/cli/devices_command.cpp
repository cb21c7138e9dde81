// `attnscope devices`: GPUs, clocks, driver and library versions, or why there is no GPU.
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "profiling/engine/devices.hpp"

namespace attn::cli {

int list_devices(bool as_json) {
  const SystemReport s = describe_system();
  const auto& lib = s.libraries;
  if (as_json) {
    nlohmann::json j;
    j["driver"] = s.driver;
    j["cuda_runtime"] = lib.cuda_runtime;
    j["cuda_driver"] = lib.cuda_driver;
    j["cublas"] = lib.cublas;
    j["cudnn"] = lib.cudnn;
    j["cupti"] = lib.cupti;
    j["gpus"] = nlohmann::json::array();
    for (const GpuInfo& g : s.gpus) {
      nlohmann::json gj{{"name", g.name},
                        {"cc", fmt::format("{}.{}", g.cc_major, g.cc_minor)},
                        {"sms", g.sms},
                        {"l2_bytes", g.l2_bytes},
                        {"mem_bytes", g.mem_bytes},
                        {"pci_bus_id", g.pci_bus_id}};
      if (g.sm_clock_mhz) gj["max_sm_clock_mhz"] = *g.sm_clock_mhz;
      if (g.mem_clock_mhz) gj["mem_clock_mhz"] = *g.mem_clock_mhz;
      j["gpus"].push_back(gj);
    }
    if (s.gpus.empty()) j["none_reason"] = s.none_reason;
    std::puts(j.dump(2).c_str());
    return kExitOk;
  }
  auto or_dash = [](const std::string& v) { return v.empty() ? std::string("-") : v; };
  if (s.gpus.empty()) {
    std::printf("no GPU: %s\n`attnscope run` uses the CPU backend here.\n", s.none_reason.c_str());
  }
  for (std::size_t i = 0; i < s.gpus.size(); ++i) {
    const GpuInfo& g = s.gpus[i];
    std::printf("GPU %zu: %s  (sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MiB, bus %s)\n", i, g.name.c_str(),
                g.cc_major, g.cc_minor, g.sms, static_cast<double>(g.mem_bytes) / (1 << 30),
                static_cast<double>(g.l2_bytes) / (1 << 20), g.pci_bus_id.c_str());
    std::printf("       clocks: SM max %s MHz, memory %s MHz\n",
                g.sm_clock_mhz ? fmt::format("{:.0f}", *g.sm_clock_mhz).c_str() : "-",
                g.mem_clock_mhz ? fmt::format("{:.0f}", *g.mem_clock_mhz).c_str() : "-");
  }
  std::printf("driver %s | CUDA runtime %s (driver supports %s) | cuBLAS %s | cuDNN %s | CUPTI %s\n",
              or_dash(s.driver).c_str(), or_dash(lib.cuda_runtime).c_str(), or_dash(lib.cuda_driver).c_str(),
              or_dash(lib.cublas).c_str(), or_dash(lib.cudnn).c_str(), or_dash(lib.cupti).c_str());
  return kExitOk;
}

}  // namespace attn::cli
