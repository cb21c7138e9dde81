// Roofline arithmetic (see roofline.hpp).
#include "profiling/roofline.hpp"

#include <algorithm>

namespace attn {

std::optional<Ceilings> ceilings_for(const Peaks& peaks, DType dtype) {
  if (dtype == DType::fp32) return std::nullopt;
  const std::optional<double> measured_tensor =
      dtype == DType::bf16 ? peaks.tensor_tflops_bf16_measured : peaks.tensor_tflops_fp16_measured;
  const std::optional<double> tensor = measured_tensor ? measured_tensor : peaks.tensor_tflops_measured;
  if (tensor && peaks.dram_gbps_measured && *tensor > 0 && *peaks.dram_gbps_measured > 0)
    return Ceilings{*tensor, *peaks.dram_gbps_measured, "measured"};
  if (peaks.tensor_tflops_datasheet && peaks.dram_gbps_datasheet && *peaks.tensor_tflops_datasheet > 0 &&
      *peaks.dram_gbps_datasheet > 0)
    return Ceilings{*peaks.tensor_tflops_datasheet, *peaks.dram_gbps_datasheet, "datasheet"};
  return std::nullopt;
}

Roofline roofline_point(double flops, std::int64_t min_bytes, std::optional<double> dram_bytes,
                        std::optional<double> tflops, const Ceilings& c) {
  Roofline r;
  r.peak_tflops = c.tflops;
  r.peak_gbps = c.gbps;
  r.peak_source = c.source;
  r.algorithmic_intensity = min_bytes > 0 ? flops / static_cast<double>(min_bytes) : 0.0;
  if (dram_bytes && *dram_bytes > 0) r.achieved_intensity = flops / *dram_bytes;
  // [TFLOP/s] / [GB/s] * 1e3 = [FLOP/B]
  r.ridge_intensity = c.tflops * 1e3 / c.gbps;
  const double x = r.achieved_intensity ? *r.achieved_intensity : r.algorithmic_intensity;
  // [FLOP/B] * [GB/s] = [GFLOP/s]; / 1e3 = [TFLOP/s]
  r.attainable_tflops = std::min(c.tflops, x * c.gbps * 1e-3);
  r.bound = x < r.ridge_intensity ? "memory" : "compute";
  if (tflops && r.attainable_tflops > 0) r.pct_of_roofline = *tflops / r.attainable_tflops * 100.0;
  return r;
}

std::optional<Roofline> roofline_for(const CaseResult& r, const Peaks& peaks) {
  if (r.flops <= 0 || r.min_bytes <= 0) return std::nullopt;
  const std::optional<Ceilings> c = ceilings_for(peaks, r.problem.dtype);
  if (!c) return std::nullopt;
  std::optional<double> dram;
  if (r.metrics) dram = r.metrics->aggregate.dram_bytes;
  return roofline_point(r.flops, r.min_bytes, dram, r.tflops, *c);
}

}  // namespace attn
