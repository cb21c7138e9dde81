// The figures a report embeds, rendered with the plot model and PNG renderer (reports/plot/):
// TFLOPS and speedup against the most-swept axis, one panel per combination of the other axes,
// and a roofline of every measured case under the run's ceilings.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "reports/plot/plot_model.hpp"
#include "reports/report_md.hpp"
#include "reports/result_set.hpp"
#include "reports/roofline_figure.hpp"

namespace attn {

struct FigureOptions {
  std::string baseline;           // speedup figures refer to it; empty = none
  std::filesystem::path out_dir;  // PNGs are written here (created)
  std::string link_prefix;        // prepended to file names in the report links: "figures/"
  int width = 800, height = 500;  // [px]
  std::size_t max_panels = 6;     // panels beyond this are left out (a note says so)
  bool svg = true;                // an SVG beside every PNG (same name, .svg): papers want vectors
  RooflineOptions roofline;       // intensity kind and the optional L2 ceiling
};

// The axis the sweep varies most among measured cases: seq (seq_q when some Sk != Sq), seq_kv,
// head_dim, batch or heads, in that order on ties. Empty when no measured case exists.
std::string most_swept_axis(const std::vector<CaseResult>& cases);

// Renders the report's figures; `notes` receives what was left out and why. Throws the plot
// module's errors for I/O failures only: data that cannot be plotted becomes a note.
std::vector<ReportFigure> render_report_figures(const ResultSet& set, const FigureOptions& options,
                                                std::vector<std::string>& notes);

}  // namespace attn
