// The roofline figure: every measured case as a point (not a line) under the run's ceilings,
// placed by measured DRAM intensity by default, with ridge points labelled and, when the run
// has the data, an L2 ceiling with each case's L2 intensity (hierarchical, as Nsight Compute's).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "profiling/result.hpp"
#include "reports/plot/plot_model.hpp"

namespace attn {

enum class RooflineIntensity {
  measured,     // flops / DRAM bytes CUPTI counted (dram__bytes_read + write)
  algorithmic,  // flops / min_bytes (Q, K, V read once, O written once)
};

struct RooflineOptions {
  RooflineIntensity intensity = RooflineIntensity::measured;
  // L2 bandwidth [GB/s] for the L2 ceiling; unset: the run's measured L2 bandwidth
  // (peaks.l2_gbps_measured), if any. With a ceiling, cases whose records hold their L2 traffic
  // (metrics.l2_bytes, lts__t_bytes.sum) are placed a second time, hollow, at their L2 intensity.
  std::optional<double> l2_gbps;
};

// Throws std::invalid_argument when the run has no peaks or no case was measured. With measured
// intensity and no case holding DRAM bytes (a CPU run, --metrics none) it falls back to the
// algorithmic intensity and says so in the subtitle and plot.notes.
plot::Plot roofline_plot(const std::vector<CaseResult>& cases, const RunInfo& run,
                         const RooflineOptions& options = {});

// The DRAM bytes CUPTI measured for a case (aggregate dram_bytes), when present and > 0.
std::optional<double> measured_dram_bytes(const CaseResult& c);

}  // namespace attn
