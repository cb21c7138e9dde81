// Roofline model of a case: algorithmic intensity (flops / min_bytes), achieved intensity (flops /
// measured DRAM bytes), the attainable TFLOPS under the compute and DRAM ceilings, and how close
// the timed TFLOPS came. Pure arithmetic, shared by the engine, reports and the GUI.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/api/dtype.hpp"
#include "profiling/result.hpp"

namespace attn {

struct Ceilings {
  double tflops = 0;   // dense tensor ceiling [TFLOP/s]
  double gbps = 0;     // DRAM ceiling, read + write [GB/s]
  std::string source;  // "measured" | "datasheet"
};

// The ceilings for a dtype: the measured pair (the dtype's own GEMM peak) when the run has it,
// else the datasheet pair; nullopt when neither is complete or the dtype has no tensor-core peak
// (fp32).
std::optional<Ceilings> ceilings_for(const Peaks& peaks, DType dtype);

// Placement of one point. `dram_bytes` (measured) gives the achieved intensity, which is then the
// x the attainable value is read at; without it the algorithmic intensity is used. `tflops` is
// the timed rate (FLOP/s from the timing pass, never from the replayed metrics pass).
Roofline roofline_point(double flops, std::int64_t min_bytes, std::optional<double> dram_bytes,
                        std::optional<double> tflops, const Ceilings& c);

// For a case record: nullopt without flops/min_bytes or ceilings.
std::optional<Roofline> roofline_for(const CaseResult& r, const Peaks& peaks);

}  // namespace attn
