// results.csv: one header line and one row per case, columns from the field catalogue, for spreadsheets
// and pandas. Absent optional values are empty cells; quoting follows RFC 4180.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "profiling/result.hpp"

namespace attn {

// The header: the field catalogue's csv columns (profiling/field_catalogue.cpp) in its order:
// case_id, kernel, knobs (k=v;k=v), the problem (batch ... window_right), status, reason, timing
// (median_ms ... noise_pct), flops, min_bytes, tflops, gbps, queries_per_s, correctness (max_abs,
// rel_l2, tol, pass), device_bytes_peak, sm_mhz, temp_c, power_w; then variant, metrics_status,
// the CUPTI metrics of the case's aggregate and the roofline placement.
std::string results_csv_header();
// Rows end in "\n". Doubles use the shortest text that reads back exactly ("nan", "inf" when
// non-finite); booleans are true/false; a field holding , " CR or LF is quoted, quotes doubled.
std::string results_csv(const std::vector<CaseResult>& cases);
// Writes results_csv(cases) to `file` (parent directories created); throws ResultsIoError.
void write_results_csv(const std::filesystem::path& file, const std::vector<CaseResult>& cases);

// One RFC 4180 field: quoted when it holds a comma, a quote, CR or LF.
std::string csv_field(std::string_view s);

}  // namespace attn
