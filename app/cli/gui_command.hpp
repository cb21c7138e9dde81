// `attnscope gui`: the flags of the desktop workbench and how the CLI reaches it. The GUI itself
// is the separate executable attnscope-gui (app/gui/), so `attnscope` needs no GLFW or libGL at
// run time; `attnscope gui` execs attnscope-gui found next to it.
#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace attn::cli {

struct GuiOptions {
  std::vector<std::string> open;        // results.jsonl files or run directories, shown side by side
  std::optional<std::string> replay;    // a results file fed in at its recorded pace, as if live
  double replay_speed = 1;              // x faster than recorded
  std::optional<std::string> preset;    // the sweep form's preset at start
  std::string screenshot;               // PNG of the window's framebuffer: after --frames, or on F12
  int frames = 0;                       // > 0: render this many frames, then exit
  std::string size;                     // window size WxH [px]; default: the saved one, else 1600x1000
  std::string frame_stats;              // JSON file receiving per-frame times [ms] at exit
  std::string widget_map;               // JSON file receiving widget rectangles each frame (GUI tests)
  bool no_persist = false;              // neither read nor write the settings file
  std::optional<std::string> x, y;      // the Plots panel's x axis and y measurement at start
  std::optional<std::string> plot_tab;  // the Plots panel's tab at start: tflops|speedup|latency|gbps|metric
  std::optional<std::string> facet;     // the Plots panel's panels at start: none|auto|an axis
  std::vector<std::string> plugins;     // --plugin PATH: plug-in kernels in the kernel list and sweeps
  std::vector<std::string> kernel_sources;  // --kernel-source FILE.cu: likewise, compiled with NVRTC
  std::vector<std::string> python_kernels;  // --python-kernel FILE.py:FUNC[=ID]: run in Python workers
  std::vector<std::string> watch;           // --watch FILE (.so or .cu): hot reload, each save a new version
  std::optional<std::string> select;        // case id selected at start
};

void add_gui_flags(CLI::App& cmd, GuiOptions& options);

// The in-process GUI; attnscope-gui's main sets it before calling cli::main. Null in `attnscope`.
using GuiEntry = int (*)(const GuiOptions&);
void set_gui_entry(GuiEntry entry);

// Whether this process can show the GUI: a display ($DISPLAY or $WAYLAND_DISPLAY) and a GUI
// (in-process, or attnscope-gui next to this executable). `why_not` says what is missing.
bool gui_available(std::string* why_not = nullptr);

// Runs the GUI in-process when the entry is set, else execs attnscope-gui with `argv` (the
// arguments after the program name, "gui" included). Returns only on failure (exit code 1).
int run_gui_command(const GuiOptions& options, const std::vector<std::string>& argv);

}  // namespace attn::cli
