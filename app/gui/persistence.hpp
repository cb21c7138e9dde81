// What the GUI remembers between sessions: window size, the tiled layout's split sizes, the last
// sweep form, the plot choices and recent files, in one JSON file
// ($ATTNSCOPE_GUI_SETTINGS, else $XDG_CONFIG_HOME/attnscope/gui.json, else ~/.config/...).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "app/gui/sweep_form.hpp"

namespace attn::gui {

struct LayoutSettings {
  float left_w = 330;           // [px] at scale 1: the Sweep panel's width
  float right_w = 470;          // [px] at scale 1: Inspector and Roofline width
  float plots_frac = 0.58f;     // share of the centre column's height taken by the Plots panel
  float inspector_frac = 0.5f;  // share of the right column's height taken by the Inspector
};

struct PlotSettings {
  std::string x = "seq";
  std::string tab = "tflops";        // tflops | speedup | latency | gbps | metric
  std::string metric = "median_ms";  // the y of the "metric" tab
  std::string baseline;              // speedup reference; empty = the run's baseline
  bool log_x = false, log_y = false;
  bool show_legend = true;            // off: the legend is collapsed (hover names the series)
  std::vector<std::string> group_by;  // empty = automatic (every axis that varies at a fixed x)
  // Small multiples: "none" (one plot), "auto" (panels when many axes name the series, as
  // `attnscope plot`), or an axis: one panel per value.
  std::string facet = "auto";
};

struct GuiSettings {
  int width = 1600, height = 1000;  // [px] window size
  LayoutSettings layout;
  SweepForm form;
  PlotSettings plot;
  std::vector<std::string> recent;                // most recent first, at most kMaxRecent
  int export_width = 1600, export_height = 1000;  // [px] the last PNG export size
};

inline constexpr std::size_t kMaxRecent = 10;

std::filesystem::path settings_path();
// Missing file: defaults. A file that does not parse: defaults, and `warning` says why.
GuiSettings load_settings(const std::filesystem::path& file, std::string& warning);
// Writes atomically (temporary file + rename); throws std::runtime_error naming the path.
void save_settings(const std::filesystem::path& file, const GuiSettings& settings);
void add_recent(GuiSettings& settings, const std::string& path);

}  // namespace attn::gui
