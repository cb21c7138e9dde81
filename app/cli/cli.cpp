// Subcommand wiring with CLI11. Parse errors exit 2 with CLI11's message naming the flag.
#include "app/cli/cli.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/cli/build_info.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/compile_command.hpp"
#include "app/cli/gui_command.hpp"
#include "app/cli/help_formatter.hpp"
#include "app/cli/peaks_command.hpp"
#include "app/cli/plot_command.hpp"
#include "app/cli/report_commands.hpp"
#include "app/cli/run_flags.hpp"
#include "profiling/sweep/command_line.hpp"

namespace attn::cli {

int main(int argc, char** argv) {
  CLI::App app{"attnscope: sweep, check, time and profile attention kernels"};
  use_help_formatter(app);
  app.set_version_flag("--version", build_version() + " (" + build_git_commit() + ")");
  app.require_subcommand(0, 1);

  RunOptions run_options;
  CLI::App* run =
      app.add_subcommand("run", "Plan a sweep, then check and time every case; writes runs/<id>/");
  add_run_flags(*run, run_options);

  WorkerOptions worker_options;
  CLI::App* worker = app.add_subcommand(
      "worker", "Run cases read as JSONL on stdin, one result line each on stdout (started by `run`)");
  add_worker_flags(*worker, worker_options);
  MergeOptions merge_options;
  CLI::App* merge = app.add_subcommand("merge", "Join the run directories of --shard runs into one");
  add_merge_flags(*merge, merge_options);
  SlurmOptions slurm_options;
  CLI::App* slurm = app.add_subcommand(
      "slurm", "Submit a sweep as a Slurm job array of shards, one GPU each, and a merge job after it");
  add_slurm_flags(*slurm, slurm_options);

  bool kernels_json = false;
  CLI::App* kernels = app.add_subcommand("kernels", "List the kernel registry with capabilities");
  kernels->add_flag("--json", kernels_json, "Machine-readable output");
  std::vector<std::string> kernels_plugins;
  kernels
      ->add_option("--plugin", kernels_plugins,
                   "also list the kernels of a plug-in library (repeatable; ATTNSCOPE_PLUGIN_PATH too)")
      ->type_name("PATH");
  std::vector<std::string> kernels_sources;
  add_kernel_source_option(
      *kernels, kernels_sources,
      "also list the kernel of a kernel source (compiled with NVRTC to probe what it takes)");
  std::vector<std::string> kernels_python;
  add_python_kernel_option(*kernels, kernels_python,
                           "also list a Python kernel (FILE.py:FUNC[=ID]); repeatable");

  CompileOptions compile_options;
  CLI::App* compile = add_compile_command(app, compile_options);

  bool devices_json = false;
  CLI::App* devices = app.add_subcommand("devices", "List GPUs, clocks, driver and library versions");
  devices->add_flag("--json", devices_json, "Machine-readable output");

  PeaksOptions peaks_options;
  CLI::App* peaks = add_peaks_command(app, peaks_options);

  ReportCommandOptions report_options;
  CLI::App* report = add_report_command(app, report_options);
  CompareCommandOptions compare_options;
  CLI::App* compare = add_compare_command(app, compare_options);
  CrossoverCommandOptions crossover_options;
  CLI::App* crossover = add_crossover_command(app, crossover_options);

  GuiOptions gui_options;
  CLI::App* gui = app.add_subcommand("gui", "The desktop workbench: live sweeps, plots, roofline, inspector");
  add_gui_flags(*gui, gui_options);

  PlotOptions plot_options;
  CLI::App* plot =
      app.add_subcommand("plot", "PNG and SVG plot from results files, headless, with the GUI's look");
  add_plot_flags(*plot, plot_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "attnscope: %s\nRun with --help for the allowed flags.\n", e.what());
    return kExitBadInput;
  }

  run_options.command_line = join_command_line(std::vector<std::string>(argv, argv + argc));
  if (*kernels) return list_kernels(kernels_json, kernels_plugins, kernels_sources, kernels_python);
  if (*devices) return list_devices(devices_json);
  if (*compile) return compile_kernel_source(compile_options);
  if (*peaks) return show_peaks(peaks_options);
  if (*run) return run_sweep(run_options);
  if (*worker) return run_worker_command(worker_options);
  if (*merge) {
    merge_options.command_line = run_options.command_line;
    return merge_runs(merge_options);
  }
  if (*slurm) return submit_slurm(slurm_options);
  if (*gui) return run_gui_command(gui_options, std::vector<std::string>(argv + 1, argv + argc));
  if (*plot) return plot_command(plot_options);
  if (*report) return make_report(report_options, run_options.command_line);
  if (*compare) return compare_runs(compare_options);
  if (*crossover) return find_crossover(crossover_options);

  // No subcommand: the GUI where one is built and a display exists; otherwise the default sweep
  // headless.
  std::string no_gui;
  if (gui_available(&no_gui)) return run_gui_command(gui_options, {"gui"});
  std::fprintf(stderr,
               "attnscope: %s; running the default sweep headless (attnscope run --help for options)\n",
               no_gui.c_str());
  run_options.report = true;  // a first run ends with something to look at: the report and figures
  return run_sweep(run_options);
}

}  // namespace attn::cli
