// Small text helpers shared by the terminal outputs (summary table, progress lines): number
// formats with units, case labels, one-line sanitising, UTF-8 display width and shortening.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/problem.hpp"

namespace attn {

// About 4 significant digits without an exponent: 1234, 123.4, 12.34, 1.234, 0.123 (never
// fewer than 3 decimals below 10). Non-finite values print as "nan", "inf", "-inf".
std::string format_fixed4(double v);

// A duration given in [ms], with its unit: "12.35 ms", "0.123 ms", and "45.60 µs" below 0.1 ms.
std::string format_duration_ms(double ms);

// "1x2x64x32 fp32 causal" (shape_label, dtype, mask_label), then " Hkv=.. Sk=.. Dv=.." for those
// that differ from Hq, Sq, D, then the knobs set to other than 0 (0 = the kernel chooses) as
// " name=value" in name order.
std::string config_label(const Problem& p, const Knobs& knobs = {});

// Tabs, CR and LF become single spaces, so free text (a reason) keeps a table row on one line.
std::string one_line(std::string_view s);

// Terminal columns taken by UTF-8 text: code points, as every character we print is one column.
std::size_t display_width(std::string_view utf8);

// `s` cut to at most `width` columns, ending in "..." when cut; never splits a UTF-8 sequence.
std::string shorten(std::string_view s, std::size_t width);

}  // namespace attn
