// `attnscope crossover RESULTS --a K --b K --axis AXIS`: the thresholds as text and TOML, and
// optionally a speedup plot with the thresholds marked.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "app/cli/commands.hpp"
#include "app/cli/image_size.hpp"
#include "app/cli/report_commands.hpp"
#include "reports/crossover.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plot/plot_build.hpp"
#include "reports/plot/raster.hpp"
#include "reports/plot/svg.hpp"
#include "reports/result_set.hpp"

namespace attn::cli {

CLI::App* add_crossover_command(CLI::App& app, CrossoverCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "crossover",
      "Find the smallest axis value from which kernel A beats kernel B by a headroom, per group");
  cmd->add_option("results", o.results, "run directories or results .jsonl files, read as one set")
      ->required()
      ->type_name("RESULTS...");
  cmd->add_option("--a", o.a, "the candidate kernel (must be faster), or a variant ID@knob=value+...")
      ->required()
      ->type_name("KERNEL");
  cmd->add_option("--b", o.b, "the incumbent kernel (or variant ID@knob=value+...)")
      ->required()
      ->type_name("KERNEL");
  cmd->add_option("--axis", o.axis, std::string("the swept axis: ") + kCrossAxisAllowed)
      ->required()
      ->check(CLI::IsMember(
          {"seq", "seq_q", "seq_kv", "head_dim", "head_dim_v", "batch", "heads", "heads_kv", "window"}));
  cmd->add_option("--headroom", o.headroom, "A must be at least this many times faster than B (default 1.1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--key", o.key, "TOML key of the threshold (default min_<axis>), e.g. fa2_min_len_cmp")
      ->type_name("NAME");
  cmd->add_option(
         "--mask", o.mask,
         "only problems whose mask starts with this: cmp (NSA's compressed branch), causal+win, full ...")
      ->type_name("PREFIX");
  cmd->add_option("-o,--out", o.out, "write the TOML snippet to FILE")->type_name("FILE");
  cmd->add_option(
         "--md", o.markdown,
         "write a Markdown report section (speedup tables, the chosen thresholds, the snippet) to FILE")
      ->type_name("FILE.md");
  cmd->add_option(
         "--plot", o.plot,
         "write a PNG (or, for FILE.svg, an SVG) of the speedup of A over B with the thresholds marked")
      ->type_name("FILE.png");
  cmd->add_option("--size", o.size, "plot size WxH [px]")->capture_default_str();
  return cmd;
}

namespace {

std::string plot_axis(CrossAxis a) { return std::string(to_string(a)); }

void write_crossover_plot(const ResultSet& set, const CrossoverResult& r, const std::string& file, int width,
                          int height) {
  LoadedRun run;
  run.run = set.primary();
  for (const CaseResult& c : set.cases)
    if (variant_label(c) == r.options.a || variant_label(c) == r.options.b) run.cases.push_back(c);
  plot::PlotSpec spec;
  spec.x = plot_axis(r.options.axis);
  spec.y = "speedup";
  spec.baseline = r.options.b;
  std::set<std::int64_t> xs;
  for (const auto& g : r.groups)
    for (const auto& p : g.points) xs.insert(p.value);
  spec.log_x = !xs.empty() && *xs.rbegin() >= 8 * *xs.begin();
  spec.title = fmt::format("{} over {} along {} (threshold: {:.4g}x)", r.options.a, r.options.b, spec.x,
                           r.options.headroom);
  plot::Plot p = plot::build_plot({run}, spec);
  p.hlines.push_back(
      {r.options.headroom, fmt::format("headroom {:.4g}x", r.options.headroom), {200, 40, 40, 255}});
  std::set<std::int64_t> marked;
  for (const auto& g : r.groups) {
    if (!g.threshold || !marked.insert(*g.threshold).second) continue;
    std::string who;
    for (const auto& h : r.groups)
      if (h.threshold == g.threshold) who += (who.empty() ? "" : "; ") + h.label;
    p.vlines.push_back(
        {static_cast<double>(*g.threshold),
         fmt::format("{} >= {}{}", spec.x, *g.threshold, r.groups.size() > 1 ? " (" + who + ")" : ""),
         {200, 40, 40, 255}});
  }
  if (std::filesystem::path(file).extension() == ".svg")
    plot::write_svg(plot::render_plot_svg(p, width, height), file);
  else
    plot::write_png(plot::render_plot(p, width, height), file);
}

}  // namespace

int find_crossover(const CrossoverCommandOptions& o) {
  const auto axis = parse_cross_axis(o.axis);
  if (!axis) {
    std::fprintf(stderr, "attnscope crossover: --axis '%s': unknown axis; allowed: %s\n", o.axis.c_str(),
                 kCrossAxisAllowed);
    return kExitBadInput;
  }
  ResultSet set;
  CrossoverResult r;
  try {
    set = load_result_set(o.results);
    r = find_crossovers(set.cases, {o.a, o.b, *axis, o.headroom, o.key, o.mask});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope crossover: %s\n", e.what());
    return kExitBadInput;
  }
  for (const auto& w : set.warnings) std::fprintf(stderr, "attnscope crossover: warning: %s\n", w.c_str());
  std::string source;
  for (const auto& s : set.sources) source += (source.empty() ? "" : ", ") + s.file.string();
  const std::string toml = crossover_toml(r, source);
  std::fputs(crossover_text(r).c_str(), stdout);
  std::fputs("\n", stdout);
  std::fputs(toml.c_str(), stdout);
  const auto write = [](const std::string& file, const std::string& text, const char* what) {
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) {
      std::fprintf(stderr, "attnscope crossover: cannot write %s\n", file.c_str());
      return false;
    }
    std::fprintf(stderr, "attnscope crossover: %s written to %s\n", what, file.c_str());
    return true;
  };
  if (!o.out.empty() && !write(o.out, toml, "thresholds")) return kExitBadInput;
  if (!o.markdown.empty() && !write(o.markdown, crossover_markdown(r, source), "report section"))
    return kExitBadInput;
  if (!o.plot.empty()) {
    try {
      const auto [width, height] = parse_image_size(o.size);
      write_crossover_plot(set, r, o.plot, width, height);
      std::fprintf(stderr, "attnscope crossover: plot written to %s\n", o.plot.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "attnscope crossover: cannot draw the plot: %s\n", e.what());
      return kExitBadInput;
    }
  }
  return kExitOk;
}

}  // namespace attn::cli
