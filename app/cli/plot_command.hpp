// `attnscope plot`: PNG figures from results files, drawn by the same plot model and layout as
// the GUI (reports/plot/).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace attn::cli {

struct PlotOptions {
  std::vector<std::string> results;  // results.jsonl files or run directories holding one
  std::string x = "seq";
  std::string y = "tflops";
  std::string baseline;
  std::vector<std::string> group_by;
  std::vector<std::string> kernels;  // plot only these kernels; empty = all
  std::vector<std::string> where;    // AXIS=VALUE filters on the problem axes
  bool log_x = false, log_y = false;
  std::string kind = "auto";  // line | bars | auto (bars for --y speedup, else line)
  std::string out;            // file, or a directory for the default name; empty = ./<default>
  std::string size = "800x500";
  std::string title;
  std::string facet = "auto";  // auto | none | an axis: one panel per value (small multiples)
  bool no_svg = false;         // PNG only; by default an SVG is written beside it
};

void add_plot_flags(CLI::App& cmd, PlotOptions& options);
int plot_command(const PlotOptions& options);

}  // namespace attn::cli
