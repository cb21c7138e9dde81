// Report section: the title, a one-line summary of the run, and warnings met while reading it.
#include <fmt/format.h>

#include "reports/case_query.hpp"
#include "reports/sections/section.hpp"
#include "reports/sections/section_util.hpp"
#include "reports/text_format.hpp"

namespace attn {

std::string title_section(const ReportContext& ctx) {
  const ResultSet& set = ctx.set;
  const RunInfo& run = set.primary();
  std::vector<std::string> kernels, ok_kernels;
  for (const CaseResult& c : set.cases) {
    add_unique(kernels, variant_label(c));
    if (is_measured(c)) add_unique(ok_kernels, variant_label(c));
  }
  std::string out =
      fmt::format("# attnscope report: {}\n\n", run.run_id.empty() ? std::string("run") : run.run_id);
  out +=
      fmt::format("{} cases of {} kernels on {}, started {}; {} of {} kernels measured.\n\n",
                  set.cases.size(), kernels.size(), run.gpu ? run.gpu->name : std::string("the CPU backend"),
                  run.started_at.empty() ? std::string("(time not recorded)") : run.started_at,
                  ok_kernels.size(), kernels.size());
  if (!set.warnings.empty()) {
    out += "Warnings while reading the results:\n\n";
    for (const auto& w : set.warnings) out += "- " + one_line(w) + "\n";
    out += "\n";
  }
  return out;
}

}  // namespace attn
