// GuiState: the one owner of everything the GUI shows and does. Panels (one file each) read it
// and call its actions; background work reaches it only through the ResultStore and JobRunner,
// which the frame samples once (begin_frame).
#pragma once
#include <imgui.h>

#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/gui_command.hpp"
#include "app/gui/imgui_plot.hpp"
#include "app/gui/kernel_watch.hpp"
#include "app/gui/persistence.hpp"
#include "app/gui/result_store.hpp"
#include "app/gui/sweep_form.hpp"
#include "app/gui/sweep_runner.hpp"
#include "profiling/sweep/sweep_spec.hpp"
#include "reports/plot/plot_build.hpp"
#include "reports/plot/plot_facets.hpp"
#include "reports/plot/units.hpp"

namespace attn::gui {

struct Selection {
  std::uint64_t run_key = 0;
  std::string case_id;
};

// The sweep form's planning preview, recomputed when the form changes.
struct PlanPreview {
  bool valid = false;
  std::string error;  // the SpecError message, naming the field
  SweepSpec spec;
  Backend backend = Backend::cpu;
  std::vector<Case> cases;
  std::size_t skipped = 0;
  std::map<std::string, std::map<std::string, int>> skip_reasons;  // kernel -> reason -> count
};

// A modal dialog asking for a path (and, for PNGs, a size).
struct PathDialog {
  enum class Kind {
    none,
    open,
    export_png,
    export_roofline_png,
    export_csv,
    export_jsonl,
    export_report,
    save_preset,
    resume_sweep
  };
  Kind kind = Kind::none;
  bool just_opened = false;
  std::string path;
  int width = 1600, height = 1000;  // [px] PNG size
  std::string error;
  std::filesystem::path browse_dir;  // the folder listed under the path field
};

struct Toast {
  std::string text;
  bool error = false;
  double time = 0;  // ImGui time it was raised [s]
};

class GuiState {
 public:
  GuiState(const cli::GuiOptions& options, GuiSettings settings, std::filesystem::path settings_file);
  ~GuiState();

  // Once per frame before drawing: the store snapshot (the frame's only lock on it), progress,
  // and the rebuilds that new data or changed settings call for.
  void begin_frame();

  // --- data of this frame
  const std::vector<StoredRun>& runs() const { return m_runs; }
  std::uint64_t data_revision() const { return m_data_revision; }
  // The Results table's units (one per column, scaled to its largest value over every run),
  // recomputed when the runs change, not per frame.
  const plot::UnitScale& results_time_unit() const { return m_results_time_unit; }
  const plot::UnitScale& results_flops_unit() const { return m_results_flops_unit; }
  const JobProgress& progress() const { return m_progress; }
  const StoredRun* run_by_key(std::uint64_t key) const;
  const StoredRun* selected_run() const;
  const CaseResult* selected_case() const;
  // The runs whose cases are plotted and listed, as build_plot takes them, with their keys.
  std::vector<LoadedRun> shown_runs(std::vector<std::uint64_t>* keys = nullptr) const;

  // --- actions (panels call these; none blocks)
  void select(std::uint64_t run_key, const std::string& case_id);
  bool open_results(const std::string& path);  // false and a toast when it cannot be read
  void close_run(std::uint64_t key);
  void set_run_shown(std::uint64_t key, bool shown);
  void start_sweep();
  // Continues the run directory `dir` (its plan and protocol) on the form's workers; false and a
  // toast when it cannot be read.
  bool resume_sweep(const std::string& dir);
  void stop_job();
  bool start_replay(const std::string& path, double speed);
  bool export_plot_png(const std::string& path, int width, int height, bool roofline);
  bool export_csv(const std::string& path);
  bool export_jsonl(const std::string& path);
  bool export_report(const std::string& dir);
  bool save_preset(const std::string& path);
  void notify(std::string text, bool error = false);
  void mark_form_changed() { m_form_dirty = true; }
  void mark_plot_settings_changed() { m_plot_dirty = true; }
  void open_dialog(PathDialog::Kind kind);
  void save_settings_now();
  // Hot reload (gui_watch.cpp): watch a plug-in library or kernel source; false and a toast when it
  // cannot be loaded.
  bool watch_file(const std::string& path);

  // --- owned state the panels edit directly
  GuiSettings settings;
  GuiFonts fonts;
  PlanPreview preview;
  PlotWidget plot;
  // The panels when the plot is faceted (two or more; empty otherwise, and `plot` is shown), and
  // the figure they came from without its panels, which live in the widgets: its title, facet and
  // notes (PNG export puts the widgets' plots back into it).
  std::vector<PlotWidget> plot_panels;
  plot::Figure plot_figure;
  std::vector<std::uint64_t> plot_run_keys;  // store key of each run build_plot saw, by index
  KernelWatch watch;                         // the watched kernel files and their versions
  std::string watch_path_input;              // the "Watched kernel files" path field
  std::string watch_open_diagnostic;         // the compile diagnostic whose lines are shown ("v:line:i")
  PlotWidget roofline;
  std::uint64_t roofline_run_key = 0;
  std::string roofline_title;         // which run the roofline shows
  bool roofline_algorithmic = false;  // place cases by flops / min_bytes, not measured DRAM bytes
  void mark_roofline_changed() { m_plot_dirty = true; }
  std::vector<std::string> plot_metric_names;  // y names of the "metric" tab
  std::vector<std::string> presets;            // names in the presets folder
  std::string presets_dir;
  PathDialog dialog;
  std::vector<Toast> toasts;
  std::string backend_note;  // "cuda: NVIDIA H100 ..." or "cpu (no CUDA device: ...)"
  bool cuda_available = false;
  bool show_help = false;
  std::optional<Selection> selection;
  bool scroll_table_to_selection = false;
  ImGuiTextFilter table_filter;  // the Results panel's filter; CSV export writes what it shows
  bool table_hide_skipped = false;
  // The Results panel's rows (run key, case index) after filter and sort, rebuilt when the data,
  // the filter or the sort order change.
  struct TableView {
    std::vector<std::pair<std::uint64_t, std::size_t>> rows;
    std::uint64_t data_revision = 0;
    std::string filter;
    bool hide_skipped = false;
    int sort_column = -1;
    bool ascending = true;
  } table_view;
  cli::GuiOptions options;
  std::map<std::string, plot::Rect> widget_rects;  // name -> screen rect, for --widget-map
  void note_widget(const std::string& name);       // the last ImGui item's rectangle
  void note_widget(const std::string& name, ImVec2 min, ImVec2 max);

 private:
  void rebuild_preview();
  void step_watch();  // gui_watch.cpp: hot reload, once per frame
  // Starts `cases` (planned from `spec`) on the form's workers, devices and shard; false and a toast
  // when it cannot.
  bool launch_sweep(const SweepSpec& spec, Backend backend, const std::vector<Case>& cases,
                    const SweepForm& form);
  void rebuild_plot();
  void update_results_units();
  void rebuild_roofline();

  std::filesystem::path m_settings_file;
  ResultStore m_store;
  JobRunner m_runner{m_store};
  std::vector<StoredRun> m_runs;
  std::uint64_t m_seen_generation = 0;
  std::uint64_t m_data_revision = 0;
  plot::UnitScale m_results_time_unit = plot::scaled_unit("ms", 0);
  plot::UnitScale m_results_flops_unit = plot::scaled_unit("TFLOPS", 0);
  JobProgress m_progress;
  // The background plan of a watched file's new version (a kernel source compiles in it).
  struct WatchPlan {
    std::future<std::vector<Case>> cases;
    std::string file;
    int version = 0;
    SweepSpec spec;
    Backend backend = Backend::cpu;
    SweepForm form;
  };
  std::optional<WatchPlan> m_watch_plan;
  std::uint64_t m_watch_store_key_before = 0;  // the job's store key before a version's sweep started
  bool m_form_dirty = true, m_plot_dirty = true;
  static constexpr double kLiveRefreshS = 0.25;  // [s] live-data refresh period during a sweep
  double m_last_refresh_s = -1e9;                // [s] ImGui time of the last snapshot taken
};

}  // namespace attn::gui
