// The commands that read saved results: `report` (Markdown with figures), `compare` (regression
// verdicts, exit 1 on a slowdown) and `crossover` (thresholds where kernel A overtakes B).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace attn::cli {

struct ReportCommandOptions {
  std::vector<std::string> results;  // run directories or .jsonl files; the first is the primary run
  std::string out;                   // report file; default <first run dir>/report.md
  std::string baseline;
  bool no_figures = false;
  bool no_svg = false;
  int width = 800, height = 500;
  std::string size;  // "WxH"; overrides width and height
};
CLI::App* add_report_command(CLI::App& app, ReportCommandOptions& o);
int make_report(const ReportCommandOptions& o, const std::string& command_line);

struct CompareCommandOptions {
  std::string base, now;
  std::string threshold = "3%";
  double sigma = 2.0;
  std::string format = "md";
  std::string out;  // default stdout
  bool allow_missing = false;
};
CLI::App* add_compare_command(CLI::App& app, CompareCommandOptions& o);
int compare_runs(const CompareCommandOptions& o);

struct CrossoverCommandOptions {
  std::vector<std::string> results;
  std::string a, b, axis;
  double headroom = 1.1;
  std::string key;
  std::string mask;              // only problems whose mask label starts with this
  std::string out;               // TOML file; default: printed only
  std::string markdown;          // Markdown report section; default none
  std::string plot;              // PNG (or .svg) with the thresholds marked; default none
  std::string size = "800x500";  // of the plot, WxH [px]
};
CLI::App* add_crossover_command(CLI::App& app, CrossoverCommandOptions& o);
int find_crossover(const CrossoverCommandOptions& o);

}  // namespace attn::cli
