// `attnscope peaks`: reads the per-GPU cache or measures (cuBLAS GEMM fp16/bf16, device copy) and
// prints measured against datasheet values.
#include "app/cli/peaks_command.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "profiling/engine/devices.hpp"
#include "profiling/peaks.hpp"

namespace attn::cli {

namespace {
void announce(const std::string& line) { std::fprintf(stderr, "attnscope peaks: %s\n", line.c_str()); }

std::string ratio(double measured, const std::optional<double>& sheet) {
  return sheet && *sheet > 0 ? fmt::format("{:.1f}%", measured / *sheet * 100.0) : std::string("-");
}
std::string value(const std::optional<double>& v, const char* fmt_spec) {
  return v ? fmt::format(fmt::runtime(fmt_spec), *v) : std::string("-");
}
}  // namespace

CLI::App* add_peaks_command(CLI::App& app, PeaksOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "peaks",
      "Measured ceilings of GPU 0 (dense fp16/bf16 tensor TFLOPS, DRAM GB/s) beside datasheet values");
  cmd->add_flag("--remeasure", o.remeasure, "Measure again and replace the cached values for this GPU");
  cmd->add_flag("--json", o.json, "Machine-readable output");
  return cmd;
}

int show_peaks(const PeaksOptions& o) {
  const SystemReport s = describe_system();
  if (s.gpus.empty()) {
    std::fprintf(stderr, "attnscope peaks: no GPU to measure: %s\n", s.none_reason.c_str());
    return kExitCaseFailed;
  }
  const GpuInfo& gpu = s.gpus.front();
  MeasuredPeaks m;
  try {
    m = load_or_measure_peaks(gpu, s.driver, o.remeasure, announce);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope peaks: %s\n", e.what());
    return kExitCaseFailed;
  }
  const Peaks sheet = datasheet_peaks(gpu.name);
  if (o.json) {
    nlohmann::json j = {{"gpu", gpu.name},
                        {"pci_bus_id", gpu.pci_bus_id},
                        {"driver", s.driver},
                        {"tensor_tflops_fp16_measured", m.tensor_tflops_fp16},
                        {"tensor_tflops_bf16_measured", m.tensor_tflops_bf16},
                        {"dram_gbps_measured", m.dram_gbps},
                        {"l2_gbps_measured", m.l2_gbps},
                        {"measured_at", m.measured_at},
                        {"method", m.method},
                        {"cache", peaks_cache_path().string()}};
    if (sheet.tensor_tflops_datasheet) j["tensor_tflops_datasheet"] = *sheet.tensor_tflops_datasheet;
    if (sheet.dram_gbps_datasheet) j["dram_gbps_datasheet"] = *sheet.dram_gbps_datasheet;
    std::puts(j.dump(2).c_str());
    return kExitOk;
  }
  std::printf("GPU 0: %s (bus %s, driver %s)\n", gpu.name.c_str(), gpu.pci_bus_id.c_str(), s.driver.c_str());
  std::printf("%-22s %10s %10s %10s\n", "", "measured", "datasheet", "of sheet");
  std::printf("%-22s %10.1f %10s %10s\n", "fp16 tensor [TFLOP/s]", m.tensor_tflops_fp16,
              value(sheet.tensor_tflops_datasheet, "{:.1f}").c_str(),
              ratio(m.tensor_tflops_fp16, sheet.tensor_tflops_datasheet).c_str());
  std::printf("%-22s %10.1f %10s %10s\n", "bf16 tensor [TFLOP/s]", m.tensor_tflops_bf16,
              value(sheet.tensor_tflops_datasheet, "{:.1f}").c_str(),
              ratio(m.tensor_tflops_bf16, sheet.tensor_tflops_datasheet).c_str());
  std::printf("%-22s %10.0f %10s %10s\n", "DRAM [GB/s]", m.dram_gbps,
              value(sheet.dram_gbps_datasheet, "{:.0f}").c_str(),
              ratio(m.dram_gbps, sheet.dram_gbps_datasheet).c_str());
  std::printf("%-22s %10.0f %10s %10s\n", "L2 read [GB/s]", m.l2_gbps, "-", "-");
  std::printf("measured %s: %s\ncache %s (--remeasure to measure again)\n", m.measured_at.c_str(),
              m.method.c_str(), peaks_cache_path().c_str());
  return kExitOk;
}

}  // namespace attn::cli
