// The Markdown report of a run (`attnscope report`): environment, protocol, configuration matrix,
// results per dtype with baseline speedups and correctness, skipped and failed cases, profiling
// summary, embedded figures, observations computed from the data, and reproducibility commands.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profiling/result.hpp"
#include "reports/result_set.hpp"

namespace attn {

struct ReportFigure {
  std::string title;    // "TFLOPS vs sequence length"
  std::string path;     // as written in the link, relative to the report: "figures/tflops_vs_seq.png"
  std::string caption;  // one line under the image; may be empty
};

struct ReportOptions {
  std::string baseline;  // speedups refer to it; empty = the primary run's baseline
  std::vector<ReportFigure> figures;
  std::string attnscope = "attnscope";  // how the reproducibility commands spell the executable
  std::string report_command;           // the command that wrote this report; empty = not shown
  double near_ceiling = 0.8;            // "near a roofline ceiling" = at least this fraction of it
};

// The whole report. Deterministic for equal inputs (golden-tested); lines end in "\n".
std::string markdown_report(const ResultSet& set, const ReportOptions& options);

// Profiling summary from case records in JSON form (to_json(CaseResult) or a results line): per
// kernel, its `launch` object (or array of objects) at its largest ok case, and the median over
// its ok cases of every numeric `metrics` field. Each part says "not collected in this run" when
// no record carries it: absent values are never shown as zeros.
std::string profiling_summary_md(const std::vector<nlohmann::json>& case_records);

// Short findings computed from the data: the fastest kernel per (dtype, mask) regime, where each
// kernel's speedup over `baseline` peaks, and cases at >= near_ceiling of a roofline ceiling
// (measured peaks first, else datasheet). One line each, without the leading "- ".
std::vector<std::string> report_observations(const std::vector<CaseResult>& cases, const RunInfo& run,
                                             const std::string& baseline, double near_ceiling);

// `attnscope run` for exactly this case's kernel and problem under `protocol`, results to
// runs/repro-<case_id>. With `for_ncu`: no check, one warm-up launch and one sample, warm L2, wrapped
// in an ncu command that profiles the kernels inside attnscope's NVTX ranges.
std::string single_case_command(const CaseResult& c, const Protocol& protocol, const std::string& attnscope,
                                bool for_ncu);

}  // namespace attn
