// `attnscope plot RESULTS... --x AXIS --y Y ...`: reads the runs, builds the plot model (faceted
// into panels when many axes vary), lays it out and writes a PNG and an SVG headless; bad input
// exits 2 naming the flag, the value and what is allowed.
#include "app/cli/plot_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <tuple>

#include "app/cli/commands.hpp"
#include "app/cli/image_size.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plot/plot_build.hpp"
#include "reports/plot/plot_facets.hpp"
#include "reports/plot/raster.hpp"
#include "reports/plot/svg.hpp"

namespace attn::cli {

namespace fs = std::filesystem;

namespace {

fs::path results_file(const std::string& arg) {
  const fs::path p(arg);
  if (fs::is_directory(p)) return p / "results.jsonl";
  return p;
}

}  // namespace

void add_plot_flags(CLI::App& cmd, PlotOptions& o) {
  cmd.add_option("results", o.results, "results.jsonl files or run directories (runs/<id>/)")->required();
  cmd.add_option("--x", o.x,
                 "x axis: batch, tokens, heads, heads_kv, hidden, seq, seq_q, seq_kv, head_dim, "
                 "head_dim_v (or, with --kind bars, dtype, causal, window, mask, knobs)")
      ->capture_default_str();
  cmd.add_option("--y", o.y,
                 "tflops | speedup | latency | gbps | any metric in the records (median_ms, "
                 "noise_pct, rel_l2, power_w, dram_throughput_pct, ...)")
      ->capture_default_str();
  cmd.add_option("--baseline", o.baseline, "kernel speedups refer to (default: the run's baseline)");
  cmd.add_option("--group-by", o.group_by,
                 "axes whose values split series, comma-separated (default: every axis along which one "
                 "kernel's cases differ other than x, so a series never joins two sweeps)")
      ->delimiter(',');
  cmd.add_option("--kernels", o.kernels,
                 "plot only these kernels, comma-separated (the speedup baseline is still looked up among "
                 "all cases); a kernel the results lack is an error")
      ->delimiter(',')
      ->type_name("K1,K2,...");
  cmd.add_option("--where", o.where,
                 "plot only cases with AXIS=VALUE (repeatable: values of one axis are alternatives, "
                 "different axes must all hold), e.g. --where head_dim=128 --where causal=0; numeric "
                 "axes take a number, dtype/mask/window/knobs the label text")
      ->type_name("AXIS=VALUE");
  cmd.add_flag("--log-x", o.log_x, "log10 x axis");
  cmd.add_flag("--log-y", o.log_y, "log10 y axis");
  cmd.add_option("--kind", o.kind, "line | bars | auto (bars for --y speedup, else line)")
      ->check(CLI::IsMember({"line", "bars", "auto"}))
      ->capture_default_str();
  cmd.add_option("-o,--out", o.out,
                 "PNG file, or a directory for the default name <GPU>.png / "
                 "<GPU>_<kernel>_Speedup.png (default: the current directory)");
  cmd.add_option("--size", o.size, "image size WxH [px]")->capture_default_str();
  cmd.add_option("--facet", o.facet,
                 "small multiples, one panel per value of an axis: auto (when more than two axes, or "
                 "more than ten series over two axes, name the series), none, or an axis such as "
                 "head_dim or mask")
      ->capture_default_str();
  cmd.add_flag("--no-svg", o.no_svg,
               "write the PNG only (default: an SVG beside it; -o x.svg writes SVG only)");
  cmd.add_option("--title", o.title, "figure title (default: <GPU>: <y> vs <x>)");
}

int plot_command(const PlotOptions& o) {
  try {
    int width = 0, height = 0;
    try {
      std::tie(width, height) = parse_image_size(o.size);
    } catch (const std::invalid_argument& e) {
      throw plot::PlotSpecError(e.what());
    }
    std::vector<LoadedRun> runs;
    for (const std::string& arg : o.results) {
      const fs::path file = results_file(arg);
      if (!fs::exists(file))
        throw plot::PlotSpecError("RESULTS " + arg + ": no such file" +
                                  (fs::is_directory(arg) ? " (the directory has no results.jsonl)" : ""));
      runs.push_back(read_results(file));
      for (const std::string& w : runs.back().warnings)
        std::fprintf(stderr, "attnscope plot: warning: %s\n", w.c_str());
    }
    plot::PlotSpec spec;
    spec.x = o.x;
    spec.y = o.y;
    spec.baseline = o.baseline;
    spec.group_by = o.group_by;
    spec.kernels = o.kernels;
    spec.where = o.where;
    spec.log_x = o.log_x;
    spec.log_y = o.log_y;
    spec.kind = o.kind == "bars" || (o.kind == "auto" && o.y == "speedup") ? plot::PlotKind::bars
                                                                           : plot::PlotKind::line;
    spec.title = o.title;
    const plot::Figure fig = plot::build_figure(runs, spec, o.facet);
    const plot::Plot& p = fig.panels.front();
    for (const std::string& n : fig.notes) std::fprintf(stderr, "attnscope plot: note: %s\n", n.c_str());

    fs::path out = o.out;
    const std::string name = plot::default_plot_filename(runs, spec, p);
    if (out.empty())
      out = name;
    else if (fs::is_directory(out) || o.out.back() == '/')
      out /= name;
    if (out.has_parent_path() && !fs::exists(out.parent_path()))
      throw plot::PlotSpecError("-o " + o.out + ": directory " + out.parent_path().string() +
                                " does not exist");
    std::size_t series = 0;
    for (const plot::Plot& panel : fig.panels) series = std::max(series, panel.series.size());
    const std::string what = fig.panels.size() > 1 ? fmt::format("{} panels by {}, up to {} series each",
                                                                 fig.panels.size(), fig.facet, series)
                                                   : fmt::format("{} series", series);
    fs::path svg = out;
    if (out.extension() == ".svg") {
      plot::write_svg(plot::render_figure_svg(fig, width, height), out);
      std::printf("wrote %s (%dx%d, %s)\n", out.string().c_str(), width, height, what.c_str());
      return kExitOk;
    }
    plot::write_png(plot::render_figure(fig, width, height), out);
    std::printf("wrote %s (%dx%d, %s; %s)\n", out.string().c_str(), width, height, what.c_str(),
                plot::renderer_description().c_str());
    if (!o.no_svg) {
      svg.replace_extension(".svg");
      plot::write_svg(plot::render_figure_svg(fig, width, height), svg);
      std::printf("wrote %s\n", svg.string().c_str());
    }
    return kExitOk;
  } catch (const plot::PlotSpecError& e) {
    std::fprintf(stderr, "attnscope plot: %s\n", e.what());
  } catch (const ResultsFormatError& e) {
    std::fprintf(stderr, "attnscope plot: %s\n", e.what());
  } catch (const ResultsIoError& e) {
    std::fprintf(stderr, "attnscope plot: %s\n", e.what());
  } catch (const plot::PlotIoError& e) {
    std::fprintf(stderr, "attnscope plot: %s\n", e.what());
  } catch (const plot::FontError& e) {
    std::fprintf(stderr, "attnscope plot: %s\n", e.what());
  }
  return kExitBadInput;
}

}  // namespace attn::cli
