// Units that scale with the data: a CPU's 0.005 TFLOPS reads as 5 GFLOPS, a 40 µs kernel as µs,
// one unit for a whole axis or table column so values are never mixed within one.
#pragma once
#include <string>

namespace attn::plot {

struct UnitScale {
  std::string unit;   // the unit to print
  double factor = 1;  // multiply values in the original unit by this
};

// The unit in which values up to `max_abs` (in `unit`) read best: TFLOPS -> GFLOPS below 1 ->
// MFLOPS below 1e-3; GB/s -> MB/s below 1; ms -> µs below 1 -> ns below 1e-3, s from 1000 up;
// B -> KiB/MiB/GiB from 1 KiB/MiB/GiB up; MiB -> GiB from 1 GiB up. Other units, a zero or a
// non-finite maximum keep `unit` with factor 1.
UnitScale scaled_unit(const std::string& unit, double max_abs);

}  // namespace attn::plot
