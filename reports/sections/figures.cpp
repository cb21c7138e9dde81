// Report section: the rendered figures, linked relative to the report.
#include <fmt/format.h>

#include "reports/sections/section.hpp"

namespace attn {

std::string figures_section(const ReportContext& ctx) {
  const std::vector<ReportFigure>& figs = ctx.options.figures;
  std::string out = "## Figures\n\n";
  if (figs.empty()) return out + "No figures were rendered for this report.\n\n";
  for (const ReportFigure& f : figs) {
    out += fmt::format("### {}\n\n![{}]({})\n\n", f.title, f.title, f.path);
    if (!f.caption.empty()) out += f.caption + "\n\n";
  }
  return out;
}

}  // namespace attn
