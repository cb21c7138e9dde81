// The report's sections in order. Adding a section: a file under reports/sections/ with its
// render function (declared in section.hpp) and one line here.
#include <array>

#include "reports/sections/section.hpp"

namespace attn {

namespace {
constexpr std::array kSections = {
    ReportSection{"title", &title_section},
    ReportSection{"environment", &environment_section},
    ReportSection{"protocol", &protocol_section},
    ReportSection{"matrix", &matrix_section},
    ReportSection{"results", &results_section},
    ReportSection{"passes", &passes_section},
    ReportSection{"skipped_failed", &skipped_failed_section},
    ReportSection{"profiling", &profiling_section},
    ReportSection{"figures", &figures_section},
    ReportSection{"observations", &observations_section},
    ReportSection{"reproducibility", &reproducibility_section},
};
}  // namespace

std::span<const ReportSection> report_sections() { return kSections; }

}  // namespace attn
