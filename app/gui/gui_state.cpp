// GuiState: frame sampling of the store, plan preview, plot and roofline rebuilds, and the
// actions behind menus, buttons and shortcuts (open, run, stop, replay, exports).
#include "app/gui/gui_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "app/cli/commands.hpp"
#include "app/gui/panels.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/result.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/sweep/preset.hpp"
#include "reports/csv_writer.hpp"
#include "reports/plot/raster.hpp"
#include "reports/report_figures.hpp"
#include "reports/report_md.hpp"
#include "reports/result_set.hpp"
#include "reports/run_session.hpp"

namespace attn::gui {

namespace fs = std::filesystem;

GuiState::GuiState(const cli::GuiOptions& opts, GuiSettings s, fs::path settings_file)
    : settings(std::move(s)), options(opts), m_settings_file(std::move(settings_file)) {
  presets_dir = cli::presets_dir();
  presets = list_presets(presets_dir);
  std::string why;
  cuda_available = cuda_device_available(&why);
  backend_note =
      cuda_available ? "cuda" : "cpu (" + (why.empty() ? std::string("no CUDA device") : why) + ")";
  SweepForm& form = settings.form;
  // A first start (nothing saved): the default sweep of this machine's backend.
  if (form.preset.empty() && form.kernels.empty()) form.preset = cuda_available ? "quick" : "cpu-quick";
  if (options.preset) form.preset = *options.preset;
  if (options.x) settings.plot.x = *options.x;
  if (options.y) {
    settings.plot.metric = *options.y;
    settings.plot.tab = "metric";
  }
  if (options.plot_tab) settings.plot.tab = *options.plot_tab;
  if (options.facet) settings.plot.facet = *options.facet;
  dialog.width = settings.export_width;
  dialog.height = settings.export_height;
  for (const std::string& f : options.open) open_results(f);
  for (const std::string& f : options.watch) watch_file(f);
  if (options.replay) start_replay(*options.replay, options.replay_speed);
}

GuiState::~GuiState() { m_runner.stop(); }

void GuiState::begin_frame() {
  // While a sweep streams cases, taking every new case at once cost most of each frame: a copy of
  // every run, build_plot and the roofline over all cases, and a re-render of both plot textures,
  // at up to 30 cases a second. Live data is taken at most every kLiveRefreshS; user actions
  // (axis, tab, toggles) still rebuild at once, and so does the last case of a sweep.
  // Progress first: the frame that sees the sweep finished also takes its last cases (a test or a
  // user reading "done" must not see the plot of a quarter second before).
  m_progress = m_runner.progress();
  const double now = ImGui::GetCurrentContext() ? ImGui::GetTime() : 0.0;
  const bool throttled = m_progress.running && now - m_last_refresh_s < kLiveRefreshS;
  if (!throttled && m_store.snapshot_if_changed(m_seen_generation, m_runs)) {
    m_last_refresh_s = now;
    ++m_data_revision;
    m_plot_dirty = true;
    update_results_units();
    // --select CASE_ID: the first run holding it, once it arrives.
    if (options.select && !selection) {
      for (const StoredRun& r : m_runs)
        for (const CaseResult& c : r.data.cases)
          if (c.case_id == *options.select && !selection) select(r.key, c.case_id);
    }
  }
  step_watch();
  if (m_form_dirty) {
    rebuild_preview();
    m_form_dirty = false;
  }
  if (m_plot_dirty) {
    rebuild_plot();
    rebuild_roofline();
    m_plot_dirty = false;
  }
  widget_rects.clear();
}

void GuiState::update_results_units() {
  double max_ms = 0, max_tflops = 0;
  for (const StoredRun& r : m_runs)
    for (const CaseResult& c : r.data.cases) {
      if (c.timing && std::isfinite(c.timing->median_ms)) max_ms = std::max(max_ms, c.timing->median_ms);
      if (c.tflops && std::isfinite(*c.tflops)) max_tflops = std::max(max_tflops, *c.tflops);
    }
  m_results_time_unit = plot::scaled_unit("ms", max_ms);
  m_results_flops_unit = plot::scaled_unit("TFLOPS", max_tflops);
}

const StoredRun* GuiState::run_by_key(std::uint64_t key) const {
  for (const StoredRun& r : m_runs)
    if (r.key == key) return &r;
  return nullptr;
}

const StoredRun* GuiState::selected_run() const {
  return selection ? run_by_key(selection->run_key) : nullptr;
}

const CaseResult* GuiState::selected_case() const {
  const StoredRun* r = selected_run();
  if (!r) return nullptr;
  for (const CaseResult& c : r->data.cases)
    if (c.case_id == selection->case_id) return &c;
  return nullptr;
}

std::vector<LoadedRun> GuiState::shown_runs(std::vector<std::uint64_t>* keys) const {
  std::vector<LoadedRun> out;
  for (const StoredRun& r : m_runs) {
    if (!r.shown) continue;
    out.push_back(r.data);
    if (out.back().run.run_id.empty()) out.back().run.run_id = r.label;
    if (keys) keys->push_back(r.key);
  }
  return out;
}

void GuiState::select(std::uint64_t run_key, const std::string& case_id) {
  const bool other_run = !selection || selection->run_key != run_key;
  selection = Selection{run_key, case_id};
  scroll_table_to_selection = true;
  if (other_run) rebuild_roofline();
}

void GuiState::notify(std::string text, bool error) {
  toasts.push_back({std::move(text), error, ImGui::GetCurrentContext() ? ImGui::GetTime() : 0.0});
  if (toasts.size() > 50) toasts.erase(toasts.begin());
}

bool GuiState::open_results(const std::string& path) {
  try {
    StoredRun r = load_stored_run(path);
    for (const std::string& w : r.data.warnings) notify(w, false);
    const std::string label = r.label;
    const std::size_t n = r.data.cases.size();
    m_store.add(std::move(r));
    add_recent(settings, path);
    notify(fmt::format("opened {} ({} cases)", label, n));
    return true;
  } catch (const std::exception& e) {
    notify(std::string("cannot open ") + path + ": " + e.what(), true);
    return false;
  }
}

void GuiState::close_run(std::uint64_t key) {
  if (m_progress.running && m_progress.store_key == key) {
    notify("stop the running job before closing its run", true);
    return;
  }
  if (selection && selection->run_key == key) selection.reset();
  m_store.remove(key);
}

void GuiState::set_run_shown(std::uint64_t key, bool shown) { m_store.set_shown(key, shown); }

void GuiState::rebuild_preview() {
  PlanPreview p;
  try {
    p.spec = form_spec(settings.form, presets_dir);
    p.backend = p.spec.backend ? *p.spec.backend : (cuda_available ? Backend::cuda : Backend::cpu);
    p.cases = plan(p.spec, p.backend);
    for (const Case& c : p.cases)
      if (!c.skip_reason.empty()) {
        ++p.skipped;
        ++p.skip_reasons[c.kernel][c.skip_reason];
      }
    p.valid = true;
  } catch (const SpecError& e) {
    p.error = e.what();
  } catch (const std::exception& e) {
    // A kernel source that does not compile (planning compiles it), NVRTC missing, ...
    p.error = e.what();
  }
  preview = std::move(p);
}

void GuiState::rebuild_plot() {
  std::vector<std::uint64_t> keys;
  const std::vector<LoadedRun> runs = shown_runs(&keys);
  plot_run_keys = keys;
  if (runs.empty()) {
    plot.has_plot = false;
    plot.message = "Open a results file (File > Open, Ctrl+O) or run a sweep (Run, F5).";
    plot_metric_names.clear();
    return;
  }
  plot_metric_names = plot::plot_metrics(runs);
  const PlotSettings& ps = settings.plot;
  plot::PlotSpec spec;
  spec.x = ps.x;
  spec.y = ps.tab == "metric" ? ps.metric : ps.tab;
  spec.baseline = ps.baseline;
  spec.group_by = ps.group_by;
  spec.log_x = ps.log_x;
  spec.log_y = ps.log_y;
  spec.kind = plot::PlotKind::line;
  try {
    plot::Figure fig = plot::build_figure(runs, spec, ps.facet.empty() ? "auto" : ps.facet);
    if (fig.panels.size() > 1) {
      plot_panels.resize(fig.panels.size());
      for (std::size_t i = 0; i < fig.panels.size(); ++i) {
        fig.panels[i].show_legend = ps.show_legend;
        update_plot(plot_panels[i], std::move(fig.panels[i]));
      }
      plot.has_plot = false;
      plot.message.clear();
    } else {
      plot_panels.clear();
      plot::Plot fresh = std::move(fig.panels.front());
      fresh.show_legend = ps.show_legend;
      update_plot(plot, std::move(fresh));
    }
    fig.panels.clear();  // they live in the widgets (plot, plot_panels) now
    plot_figure = std::move(fig);
  } catch (const plot::PlotSpecError& e) {
    plot_panels.clear();
    plot.has_plot = false;
    bool any_ok = false;
    for (const LoadedRun& r : runs)
      for (const CaseResult& c : r.cases) any_ok = any_ok || c.status == Status::ok;
    plot.message = any_ok ? e.what() : std::string("No measured case yet.");
  }
}

void GuiState::rebuild_roofline() {
  // The selected case's run, else the newest shown run.
  const StoredRun* run = selected_run();
  if (!run)
    for (const StoredRun& r : m_runs)
      if (r.shown) run = &r;
  if (!run) {
    roofline.has_plot = false;
    roofline.message = "No run yet.";
    roofline_title.clear();
    return;
  }
  roofline_title = run->label;
  roofline_run_key = run->key;
  try {
    RooflineOptions ro;
    ro.intensity = roofline_algorithmic ? RooflineIntensity::algorithmic : RooflineIntensity::measured;
    update_plot(roofline, roofline_plot(run->data.cases, run->data.run, ro));
    roofline.plot.show_legend = true;
  } catch (const std::invalid_argument& e) {
    roofline.has_plot = false;
    roofline.message = "No roofline for " + run->label + ": " + e.what() +
                       (run->data.run.backend == "cpu" ? " (CPU runs have no tensor-core ceilings)" : "");
  }
}

bool GuiState::export_plot_png(const std::string& path, int width, int height, bool which_roofline) {
  const PlotWidget& w = which_roofline ? roofline : plot;
  if (!which_roofline && !plot_panels.empty()) {
    try {
      // Every panel, with the screen's zoom and legend toggles, in the figure's grid.
      plot::Figure fig = plot_figure;
      for (const PlotWidget& panel : plot_panels) fig.panels.push_back(panel.plot);
      plot::write_png(plot::render_figure(fig, width, height), path);
      settings.export_width = width;
      settings.export_height = height;
      notify(fmt::format("wrote {} ({}x{}, {} panels)", path, width, height, fig.panels.size()));
      return true;
    } catch (const std::exception& e) {
      notify(std::string("PNG export failed: ") + e.what(), true);
      return false;
    }
  }
  if (!w.has_plot) {
    notify("nothing to export: " + w.message, true);
    return false;
  }
  try {
    // Rendered offscreen at the requested size by the PNG renderer, from the same model and layout
    // as the screen (zoom and legend toggles included): not a crop of the window.
    plot::write_png(plot::render_plot(w.plot, width, height), path);
    settings.export_width = width;
    settings.export_height = height;
    notify(fmt::format("wrote {} ({}x{})", path, width, height));
    return true;
  } catch (const std::exception& e) {
    notify(std::string("PNG export failed: ") + e.what(), true);
    return false;
  }
}

bool GuiState::export_csv(const std::string& path) {
  std::vector<CaseResult> rows;
  for (const StoredRun& r : m_runs) {
    if (!r.shown) continue;
    for (const CaseResult& c : r.data.cases)
      if (table_row_visible(*this, r, c)) rows.push_back(c);
  }
  try {
    write_results_csv(path, rows);
    notify(fmt::format("wrote {} ({} rows, as filtered in the table)", path, rows.size()));
    return true;
  } catch (const std::exception& e) {
    notify(std::string("CSV export failed: ") + e.what(), true);
    return false;
  }
}

bool GuiState::export_jsonl(const std::string& path) {
  const StoredRun* run = selected_run();
  if (!run)
    for (const StoredRun& r : m_runs)
      if (r.shown) run = &r;
  if (!run) {
    notify("no run to export", true);
    return false;
  }
  try {
    JsonlWriter w = JsonlWriter::create(path, run->data.run, true);
    for (const CaseResult& c : run->data.cases) w.append(c);
    w.close();
    notify(fmt::format("wrote {} (run {}, {} cases)", path, run->label, run->data.cases.size()));
    return true;
  } catch (const std::exception& e) {
    notify(std::string("JSONL export failed: ") + e.what(), true);
    return false;
  }
}

bool GuiState::export_report(const std::string& dir) {
  std::vector<std::string> files;
  for (const StoredRun& r : m_runs)
    if (r.shown && !r.file.empty()) files.push_back(r.file.string());
  if (files.empty()) {
    notify("no shown run is saved on disk; a report reads results files", true);
    return false;
  }
  try {
    const ResultSet set = load_result_set(files);
    const fs::path out = fs::path(dir) / "report.md";
    ReportOptions ro;
    ro.baseline = settings.plot.baseline;
    FigureOptions fo;
    fo.baseline = settings.plot.baseline.empty() ? set.primary().baseline : settings.plot.baseline;
    fo.out_dir = fs::path(dir) / "figures";
    fo.link_prefix = "figures/";
    std::vector<std::string> notes;
    ro.figures = render_report_figures(set, fo, notes);
    const std::string text = markdown_report(set, ro);
    std::ofstream f(out, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) throw std::runtime_error("cannot write " + out.string());
    notify(fmt::format("wrote {} ({} figures)", out.string(), ro.figures.size()));
    return true;
  } catch (const std::exception& e) {
    notify(std::string("report export failed: ") + e.what(), true);
    return false;
  }
}

bool GuiState::save_preset(const std::string& path) {
  try {
    const SweepSpec spec = form_spec(settings.form, presets_dir);
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f << preset_toml(spec);
      f.close();
      if (!f) throw std::runtime_error("cannot write " + path);
    }
    load_preset(path);  // what we wrote must read back
    notify("saved preset " + path);
    presets = list_presets(presets_dir);
    return true;
  } catch (const std::exception& e) {
    notify(std::string("cannot save the preset: ") + e.what(), true);
    return false;
  }
}

void GuiState::open_dialog(PathDialog::Kind kind) {
  dialog.kind = kind;
  dialog.just_opened = true;
  dialog.error.clear();
  dialog.browse_dir = fs::current_path();
  switch (kind) {
    case PathDialog::Kind::open:
      dialog.path = "runs/";
      break;
    case PathDialog::Kind::export_png:
      dialog.path = "plot.png";
      break;
    case PathDialog::Kind::export_roofline_png:
      dialog.path = "roofline.png";
      break;
    case PathDialog::Kind::export_csv:
      dialog.path = "results.csv";
      break;
    case PathDialog::Kind::export_jsonl:
      dialog.path = "results-export.jsonl";
      break;
    case PathDialog::Kind::export_report:
      dialog.path = "report";
      break;
    case PathDialog::Kind::save_preset:
      dialog.path = "my-sweep.toml";
      break;
    case PathDialog::Kind::resume_sweep:
      dialog.path = progress().out_file.empty() ? "runs/" : progress().out_file.parent_path().string();
      break;
    case PathDialog::Kind::none:
      break;
  }
}

void GuiState::save_settings_now() {
  if (options.no_persist) return;
  try {
    save_settings(m_settings_file, settings);
  } catch (const std::exception& e) {
    notify(e.what(), true);
  }
}

void GuiState::note_widget(const std::string& name) {
  note_widget(name, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

void GuiState::note_widget(const std::string& name, ImVec2 min, ImVec2 max) {
  widget_rects[name] = plot::Rect{min.x, min.y, max.x, max.y};
}

}  // namespace attn::gui
