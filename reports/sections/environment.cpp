// Report section: the GPU, peaks, software versions and host of the run, and the joined sources.
#include <fmt/format.h>

#include "reports/sections/section.hpp"
#include "reports/sections/section_util.hpp"
#include "reports/table.hpp"
#include "reports/text_format.hpp"

namespace attn {

std::string environment_section(const ReportContext& ctx) {
  const ResultSet& set = ctx.set;
  const RunInfo& r = set.primary();
  Table t({{"item"}, {"value"}});
  auto row = [&](const std::string& k, const std::string& v) { t.add_row({k, v}); };
  row("backend", or_missing(r.backend));
  if (r.gpu) {
    const GpuInfo& g = *r.gpu;
    row("GPU", fmt::format("{} (compute capability {}.{}, {} SMs, {} memory, {} L2{})", g.name, g.cc_major,
                           g.cc_minor, g.sms, gib(g.mem_bytes), mib(g.l2_bytes),
                           g.pci_bus_id.empty() ? "" : ", PCI " + g.pci_bus_id));
    std::string clocks;
    if (g.sm_clock_mhz) clocks += fmt::format("SM {:.0f} MHz", *g.sm_clock_mhz);
    if (g.mem_clock_mhz)
      clocks += fmt::format("{}memory {:.0f} MHz", clocks.empty() ? "" : ", ", *g.mem_clock_mhz);
    if (g.mem_bus_bits)
      clocks += fmt::format("{}{:.0f}-bit bus", clocks.empty() ? "" : ", ", *g.mem_bus_bits);
    row("clocks", clocks.empty() ? "not recorded" : clocks + " (at the start of the run)");
  } else {
    row("GPU", "none (CPU backend)");
  }
  auto peak = [](const std::optional<double>& v, const char* unit) {
    return v ? format_fixed4(*v) + " " + unit : std::string("not measured in this run");
  };
  auto sheet = [](const std::optional<double>& v, const char* unit) {
    return v ? format_fixed4(*v) + " " + unit : std::string("no datasheet entry for this device");
  };
  row("memory bandwidth", "measured " + peak(r.peaks.dram_gbps_measured, "GB/s") + "; datasheet " +
                              sheet(r.peaks.dram_gbps_datasheet, "GB/s"));
  row("tensor peak (fp16/bf16 dense)", "measured " + peak(r.peaks.tensor_tflops_measured, "TFLOPS") +
                                           "; datasheet " + sheet(r.peaks.tensor_tflops_datasheet, "TFLOPS"));
  row("driver", or_missing(r.driver));
  row("CUDA runtime", or_missing(r.cuda_runtime));
  row("cuDNN", or_missing(r.cudnn));
  row("CUPTI", or_missing(r.cupti));
  row("host", fmt::format("{}; {}{}", or_missing(r.host), or_missing(r.cpu_model, "CPU not recorded"),
                          r.cpu_threads > 0 ? fmt::format(" ({} threads)", r.cpu_threads) : ""));
  if (!r.os.empty()) row("OS", r.os);
  row("attnscope", fmt::format("{} (commit {})", or_missing(r.version), or_missing(r.git_commit)));
  row("run", fmt::format("{}, started {}", or_missing(r.run_id), or_missing(r.started_at)));
  std::string out = "## Environment\n\n" + t.markdown();
  if (set.sources.size() > 1) {
    out += "\nSources (joined into this report; the first one's environment is shown above):\n\n";
    Table s({{"file"}, {"run"}, {"version"}, {"started"}, {"cases", Align::right}});
    for (const ResultSource& src : set.sources)
      s.add_row({display_name(src.file), src.run.run_id, src.run.version, src.run.started_at,
                 std::to_string(src.cases)});
    out += s.markdown();
  }
  return out + "\n";
}

}  // namespace attn
