// The Markdown report of a run (`attnscope report`): an ordered list of sections, one file each
// under reports/sections/ (environment, protocol, configuration matrix, results per dtype with
// baseline speedups and correctness, skipped and failed cases, profiling summary, embedded figures,
// observations computed from the data, and reproducibility commands).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
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

// Findings computed from the data, as data; render_observation() turns one into its line.
struct ObservedCase {
  std::string kernel;  // variant label
  std::string config;  // config_label of its problem and knobs
};
// The kernel fastest on most problems of a (dtype, mask) regime where two or more were measured.
struct FastestInRegime {
  std::string regime;                                  // "fp16 causal"
  int contested = 0;                                   // problems with two or more measured kernels
  std::vector<std::pair<std::string, int>> wins;       // kernel, problems won; most first
  std::optional<std::pair<ObservedCase, double>> top;  // the highest TFLOPS of the regime
};
// Where a kernel's speedup over the baseline peaks and where it is lowest.
struct SpeedupRange {
  std::string kernel, baseline;
  ObservedCase at_highest;
  double highest = 0;
  ObservedCase at_lowest;
  double lowest = 0;
  int problems = 0;
};
// Cases at >= near_ceiling of a roofline ceiling (measured peaks first, else datasheet).
struct RooflineNearness {
  struct Near {
    ObservedCase c;
    double frac = 0;   // of the ceiling
    const char* what;  // "tensor" | "memory"
  };
  double near_ceiling = 0;
  std::optional<double> tensor_tflops, dram_gbps;  // the ceilings; both absent = not judged
  const char* tensor_kind = "datasheet";
  const char* dram_kind = "datasheet";
  std::vector<Near> near;       // most first
  std::optional<Near> closest;  // to the tensor ceiling, when none is near
};
using Observation = std::variant<FastestInRegime, SpeedupRange, RooflineNearness>;

// One FastestInRegime per regime, one SpeedupRange per kernel with a baseline to compare to, and
// the RooflineNearness of the run, in that order.
std::vector<Observation> compute_observations(const std::vector<CaseResult>& cases, const RunInfo& run,
                                              const std::string& baseline, double near_ceiling);
// One line, without the leading "- ".
std::string render_observation(const Observation& o);
// compute_observations, rendered.
std::vector<std::string> report_observations(const std::vector<CaseResult>& cases, const RunInfo& run,
                                             const std::string& baseline, double near_ceiling);

// `attnscope run` for exactly this case's kernel and problem under `protocol`, results to
// runs/repro-<case_id>. With `for_ncu`: no check, one warm-up launch and one sample, warm L2, wrapped
// in an ncu command that profiles the kernels inside attnscope's NVTX ranges.
std::string single_case_command(const CaseResult& c, const Protocol& protocol, const std::string& attnscope,
                                bool for_ncu);

}  // namespace attn
