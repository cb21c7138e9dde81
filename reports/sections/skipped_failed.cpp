// Report section: counts per status, kernels never measured, and every case without a usable median.
#include <fmt/format.h>

#include "reports/case_query.hpp"
#include "reports/sections/section.hpp"
#include "reports/sections/section_util.hpp"
#include "reports/table.hpp"
#include "reports/text_format.hpp"

namespace attn {

std::string skipped_failed_section(const ReportContext& ctx) {
  const ResultSet& set = ctx.set;
  std::vector<std::string> kernels, ok_kernels;
  for (const CaseResult& c : set.cases) {
    add_unique(kernels, variant_label(c));
    if (is_measured(c)) add_unique(ok_kernels, variant_label(c));
  }
  std::string counts;
  for (const Status s : kAllStatuses) {
    const auto n =
        std::count_if(set.cases.begin(), set.cases.end(), [&](const CaseResult& c) { return c.status == s; });
    if (n > 0) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, to_string(s));
  }
  std::string out = "## Skipped and failed cases\n\n";
  out += fmt::format("**{} of {} kernels measured.** {} cases: {}.\n\n", ok_kernels.size(), kernels.size(),
                     set.cases.size(), counts.empty() ? std::string("none") : counts);
  std::vector<std::string> unmeasured;
  for (const auto& k : kernels)
    if (std::find(ok_kernels.begin(), ok_kernels.end(), k) == ok_kernels.end())
      unmeasured.push_back("`" + k + "`");
  if (!unmeasured.empty()) {
    std::string list;
    for (const auto& k : unmeasured) list += (list.empty() ? "" : ", ") + k;
    out += "Not measured on any case: " + list + ".\n\n";
  }
  std::vector<DType> dtypes;
  for (const CaseResult& c : set.cases) add_unique(dtypes, c.problem.dtype);
  Table t({{"kernel"}, {"config"}, {"status"}, {"reason"}});
  for (const DType dt : dtypes)
    for (const CaseResult* c : ordered(set.cases, dt, false))
      t.add_row({variant_label(*c), config_label(c->problem, c->knobs), std::string(to_string(c->status)),
                 c->reason.empty() ? std::string("-") : c->reason});
  if (t.empty()) return out + "None: every case ran and passed its check.\n\n";
  return out + t.markdown() + "\n";
}

}  // namespace attn
