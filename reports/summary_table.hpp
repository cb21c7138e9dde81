// The end-of-run table for the terminal: one aligned row per case, speedups against a baseline
// kernel, and a footer with counts per status.
#pragma once
#include <string>
#include <vector>

#include "profiling/result.hpp"

namespace attn {

// Columns: kernel (variant_label: "fa2.mma@br=64" for a non-default variant), config (config_label:
// shape, dtype, mask, Hkv/Sk/Dv when they differ, knobs), status, median (in µs when every median
// is below 1 ms, else ms; the header names the unit), TFLOPS, "speedup vs <baseline>" (omitted when
// `baseline` is empty), correctness ("1.2e-04 pass" or "FAIL"), note (a non-ok case's reason,
// shortened; the files keep the full text). Rows keep the order of `cases`. Speedup = the fastest
// ok median of the `baseline` variant (a variant label) on the same Problem divided by this case's
// median, "-" when either is missing. Footer: "M cases: 5 ok, 2 skipped, ..." and "N of K kernels
// measured" (variants with an ok case / distinct variants in `cases`).
// Lines end in "\n" and carry no trailing spaces.
std::string format_summary(const std::vector<CaseResult>& cases, const std::string& baseline);

}  // namespace attn
