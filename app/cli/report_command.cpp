// `attnscope report RESULTS... [-o report.md]`: the Markdown report with its figures.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "app/cli/commands.hpp"
#include "app/cli/image_size.hpp"
#include "app/cli/report_commands.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plot/raster.hpp"
#include "reports/report_figures.hpp"
#include "reports/report_md.hpp"

namespace attn::cli {

namespace fs = std::filesystem;

CLI::App* add_report_command(CLI::App& app, ReportCommandOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("report", "Write a Markdown report (with PNG figures) of one or more results files");
  cmd->add_option("results", o.results,
                  "run directories or results .jsonl files (shards, other runs, records of other tools); the "
                  "first one's run record describes the run")
      ->required()
      ->type_name("RUN_DIR|FILE...");
  cmd->add_option("-o,--out", o.out, "report file (default: report.md in the first run's directory)")
      ->type_name("FILE");
  cmd->add_option(
         "--baseline", o.baseline,
         "kernel (or variant ID@knob=value+...) that speedups refer to (default: the run's baseline)")
      ->type_name("KERNEL");
  cmd->add_flag("--no-figures", o.no_figures, "do not render PNG figures");
  cmd->add_option("--size", o.size, "figure size WxH [px], e.g. 1200x750 (default 800x500)");
  cmd->add_option("--width", o.width, "figure width [px] (--size sets both)")->check(CLI::Range(320, 4000));
  cmd->add_option("--height", o.height, "figure height [px] (--size sets both)")
      ->check(CLI::Range(200, 4000));
  cmd->add_flag("--no-svg", o.no_svg, "PNG figures only (default: an SVG beside each PNG)");
  return cmd;
}

int make_report(const ReportCommandOptions& o, const std::string& command_line) {
  ResultSet set;
  try {
    set = load_result_set(o.results);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope report: %s\n", e.what());
    return kExitBadInput;
  }
  if (!o.baseline.empty()) {
    std::set<std::string> kernels;
    for (const CaseResult& c : set.cases) kernels.insert(variant_label(c));
    if (!kernels.contains(o.baseline)) {
      std::string list;
      for (const auto& k : kernels) list += (list.empty() ? "" : ", ") + k;
      std::fprintf(stderr,
                   "attnscope report: --baseline '%s' is not a kernel of these results; kernels: %s\n",
                   o.baseline.c_str(), list.c_str());
      return kExitBadInput;
    }
  }
  fs::path out = o.out;
  if (out.empty()) {
    std::error_code ec;
    const fs::path first = o.results.front();
    out = (fs::is_directory(first, ec) ? first : first.parent_path()) / "report.md";
  }
  ReportOptions ro;
  ro.baseline = o.baseline;
  ro.report_command = command_line;
  const std::string baseline = o.baseline.empty() ? set.primary().baseline : o.baseline;
  if (!o.no_figures) {
    FigureOptions fo;
    fo.baseline = baseline;
    fo.out_dir = out.parent_path() / "figures";
    fo.link_prefix = "figures/";
    fo.width = o.width;
    fo.height = o.height;
    fo.svg = !o.no_svg;
    if (!o.size.empty()) {
      try {
        std::tie(fo.width, fo.height) = parse_image_size(o.size);
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "attnscope report: %s\n", e.what());
        return kExitBadInput;
      }
    }
    std::vector<std::string> notes;
    try {
      ro.figures = render_report_figures(set, fo, notes);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "attnscope report: cannot write figures: %s\n", e.what());
      return kExitBadInput;
    }
    for (const auto& n : notes) std::fprintf(stderr, "attnscope report: %s\n", n.c_str());
  }
  for (const auto& w : set.warnings) std::fprintf(stderr, "attnscope report: warning: %s\n", w.c_str());
  const std::string text = markdown_report(set, ro);
  std::error_code ec;
  if (!out.parent_path().empty()) fs::create_directories(out.parent_path(), ec);
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) {
    std::fprintf(stderr, "attnscope report: cannot write %s\n", out.c_str());
    return kExitBadInput;
  }
  std::printf("report: %s (%zu cases, %zu figures)\n", out.c_str(), set.cases.size(), ro.figures.size());
  for (const ReportFigure& fig : ro.figures) {
    const fs::path png = out.parent_path() / fig.path;
    fs::path svg = png;
    svg.replace_extension(".svg");
    std::printf("figure: %s%s\n", png.c_str(),
                o.no_svg ? "" : (" (+ " + svg.filename().string() + ")").c_str());
  }
  return kExitOk;
}

}  // namespace attn::cli
