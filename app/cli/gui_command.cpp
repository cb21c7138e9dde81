// `attnscope gui` flags, the display/GUI check for the no-subcommand default, and the hand-over to
// attnscope-gui (exec, so the GUI's GLFW/libGL dependency stays out of `attnscope`).
#include "app/cli/gui_command.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "app/cli/commands.hpp"
#include "app/cli/python_kernels.hpp"
#include "app/cli/run_flags.hpp"
#include "app/cli/run_plan.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "profiling/engine/engine.hpp"

namespace attn::cli {

namespace {

namespace fs = std::filesystem;

GuiEntry g_entry = nullptr;

bool has_display() {
  for (const char* var : {"DISPLAY", "WAYLAND_DISPLAY"})
    if (const char* v = std::getenv(var); v && *v) return true;
  return false;
}

// $ATTNSCOPE_GUI, else attnscope-gui next to this executable; empty when neither exists.
fs::path gui_executable() {
  if (const char* env = std::getenv("ATTNSCOPE_GUI"); env && *env)
    return fs::exists(env) ? fs::path(env) : fs::path();
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path gui = self.parent_path() / "attnscope-gui";
  return fs::exists(gui, ec) ? gui : fs::path();
}

}  // namespace

void add_gui_flags(CLI::App& cmd, GuiOptions& o) {
  cmd.add_option("--open", o.open,
                 "results.jsonl files or run directories to show (several compare side by side)");
  cmd.add_option("--replay", o.replay,
                 "feed a saved results file into the UI at its recorded pace, as if live");
  cmd.add_option("--replay-speed", o.replay_speed, "replay this many times faster than recorded")
      ->check(CLI::Range(0.01, 1e6))
      ->capture_default_str();
  cmd.add_option("--preset", o.preset,
                 "the sweep form's preset at start (name in assets/presets or a .toml file)");
  cmd.add_option("--screenshot", o.screenshot,
                 "PNG of the window: written after --frames N frames, or on F12");
  cmd.add_option("--frames", o.frames,
                 "render this many frames, then exit (with --screenshot: write it first)")
      ->check(CLI::Range(1, 10'000'000));
  cmd.add_option("--size", o.size, "window size WxH [px] (default: the saved size, else 1600x1000)");
  cmd.add_option("--frame-stats", o.frame_stats,
                 "write per-frame times [ms] as JSON here at exit (benchmarks)");
  cmd.add_option("--widget-map", o.widget_map,
                 "write the screen rectangles of named widgets as JSON each frame "
                 "(GUI tests locate what to click)");
  cmd.add_flag("--no-persist", o.no_persist,
               "neither read nor write the settings file (layout, last sweep, recent)");
  cmd.add_option("--x", o.x, "Plots panel x axis at start (seq, head_dim, batch, ...)");
  cmd.add_option("--y", o.y,
                 "Plots panel measurement of the 'metric' tab at start (any y of `attnscope plot`)");
  cmd.add_option("--tab", o.plot_tab, "Plots panel tab at start: tflops | speedup | latency | gbps | metric")
      ->check(CLI::IsMember({"tflops", "speedup", "latency", "gbps", "metric"}));
  cmd.add_option("--facet", o.facet,
                 "Plots panel small multiples at start: none, auto, or an axis (one panel per value, as "
                 "`attnscope plot --facet`)");
  cmd.add_option("--plugin", o.plugins,
                 "load a plug-in library: its kernels join the kernel list and the sweeps (repeatable; "
                 "ATTNSCOPE_PLUGIN_PATH too; docs/plugins.md)")
      ->type_name("PATH");
  add_kernel_source_option(
      cmd, o.kernel_sources,
      "compile a CUDA kernel source with NVRTC: its kernel joins the kernel list and the "
      "sweeps (repeatable; docs/plugins.md)");
  add_python_kernel_option(cmd, o.python_kernels,
                           "a Python callable or adapter (torch.flash, ...): joins the kernel list and the "
                           "sweeps, its cases run in Python workers (repeatable; docs/python.md)");
  cmd.add_option("--watch", o.watch,
                 "watch a plug-in library (.so) or kernel source (.cu): each save loads a new version and "
                 "reruns the current sweep for its kernels as its own series, my.kernel@v2 (repeatable)")
      ->type_name("FILE");
  cmd.add_option("--select", o.select, "case id selected at start (Inspector, table and plots)");
}

void set_gui_entry(GuiEntry entry) { g_entry = entry; }

bool gui_available(std::string* why_not) {
  if (!has_display()) {
    if (why_not) *why_not = "no display ($DISPLAY and $WAYLAND_DISPLAY are unset)";
    return false;
  }
  if (g_entry || !gui_executable().empty()) return true;
  if (why_not)
    *why_not =
        "this build has no GUI (no attnscope-gui next to attnscope; build with libglfw3-dev and "
        "libimgui-dev installed, or -DATTNSCOPE_ENABLE_GUI=ON)";
  return false;
}

int run_gui_command(const GuiOptions& options, const std::vector<std::string>& argv) {
  if (g_entry) {
    try {
      load_plugins(plugin_paths(options.plugins));
    } catch (const PluginError& e) {
      std::fprintf(stderr, "attnscope gui: --plugin %s\n", e.what());
      return kExitBadInput;
    }
    try {
      load_plugins(options.kernel_sources);
    } catch (const PluginError& e) {
      std::fprintf(stderr, "attnscope gui: --kernel-source %s\n", e.what());
      return kExitBadInput;
    }
    try {
      SweepOverrides start;  // the backend of the preset the form starts with, else the GPU's presence
      start.preset = options.preset;
      load_python_kernels(options.python_kernels, backend_before_spec(start));
    } catch (const PluginError& e) {
      std::fprintf(stderr, "attnscope gui: --python-kernel %s\n", e.what());
      return kExitBadInput;
    }
    return g_entry(options);
  }
  const fs::path gui = gui_executable();
  if (gui.empty()) {
    std::string why;
    gui_available(&why);
    std::fprintf(
        stderr, "attnscope gui: %s\n",
        why.empty() ? "attnscope-gui not found next to this executable (or at $ATTNSCOPE_GUI)" : why.c_str());
    return 1;
  }
  std::vector<std::string> args{gui.string()};
  args.insert(args.end(), argv.begin(), argv.end());
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  ::execv(gui.c_str(), cargs.data());
  std::fprintf(stderr, "attnscope gui: cannot start %s: %s\n", gui.c_str(), std::strerror(errno));
  return 1;
}

}  // namespace attn::cli
