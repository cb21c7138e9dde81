// The scaling table of scaled_unit().
#include "reports/plot/units.hpp"

#include <cmath>

namespace attn::plot {

UnitScale scaled_unit(const std::string& unit, double max_abs) {
  if (!(max_abs > 0) || !std::isfinite(max_abs)) return {unit, 1};
  if (unit == "TFLOPS") {
    if (max_abs < 1e-3) return {"MFLOPS", 1e6};
    if (max_abs < 1) return {"GFLOPS", 1e3};
  } else if (unit == "GB/s") {
    if (max_abs < 1) return {"MB/s", 1e3};
  } else if (unit == "ms") {
    if (max_abs < 1e-3) return {"ns", 1e6};
    if (max_abs < 1) return {"µs", 1e3};
    if (max_abs >= 1e3) return {"s", 1e-3};
  } else if (unit == "B") {
    constexpr double k = 1024;
    if (max_abs >= k * k * k) return {"GiB", 1 / (k * k * k)};
    if (max_abs >= k * k) return {"MiB", 1 / (k * k)};
    if (max_abs >= k) return {"KiB", 1 / k};
  } else if (unit == "MiB") {
    if (max_abs >= 1024) return {"GiB", 1.0 / 1024};
  }
  return {unit, 1};
}

}  // namespace attn::plot
