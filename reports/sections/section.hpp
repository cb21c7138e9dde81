// A section of the Markdown report: one file under reports/sections/ that renders it, and one
// entry in the ordered list in sections/registry.cpp. markdown_report() concatenates them.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "reports/report_md.hpp"
#include "reports/result_set.hpp"

namespace attn {

struct ReportContext {
  const ResultSet& set;
  const ReportOptions& options;
  std::string baseline;  // options.baseline, else the primary run's
};

struct ReportSection {
  std::string_view id;  // "environment", "results", ...
  std::string (*markdown)(const ReportContext&);
};

// Every section, in report order.
std::span<const ReportSection> report_sections();

// The sections (one function per file, registered in registry.cpp).
std::string title_section(const ReportContext& ctx);
std::string environment_section(const ReportContext& ctx);
std::string protocol_section(const ReportContext& ctx);
std::string matrix_section(const ReportContext& ctx);
std::string results_section(const ReportContext& ctx);
std::string passes_section(const ReportContext& ctx);  // empty unless a backward pass was measured
std::string skipped_failed_section(const ReportContext& ctx);
std::string profiling_section(const ReportContext& ctx);
std::string figures_section(const ReportContext& ctx);
std::string observations_section(const ReportContext& ctx);
std::string reproducibility_section(const ReportContext& ctx);

}  // namespace attn
