// markdown_report(): the sections of reports/sections/, in their registered order.
#include "reports/report_md.hpp"

#include "reports/sections/section.hpp"

namespace attn {

std::string markdown_report(const ResultSet& set, const ReportOptions& options) {
  const ReportContext ctx{set, options, options.baseline.empty() ? set.primary().baseline : options.baseline};
  std::string out;
  for (const ReportSection& s : report_sections()) out += s.markdown(ctx);
  return out;
}

}  // namespace attn
