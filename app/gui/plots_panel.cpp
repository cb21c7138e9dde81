// The Plots panel: tabs (TFLOPS, speedup over a chosen baseline, latency, bandwidth, any metric)
// against a chosen swept axis, one series per kernel and group of the other axes, log/linear
// axes, the runs on show, and a click on a point selecting its case everywhere.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "app/gui/panels.hpp"
#include "reports/text_format.hpp"

namespace attn::gui {

namespace {

struct TabDef {
  const char* id;
  const char* label;
};
constexpr TabDef kTabs[] = {{"tflops", "TFLOPS"},
                            {"speedup", "Speedup"},
                            {"latency", "Latency"},
                            {"gbps", "Bandwidth"},
                            {"metric", "Metric"}};

const std::vector<std::string> kNumericAxes{"seq",   "seq_q",  "seq_kv", "head_dim", "head_dim_v",
                                            "batch", "tokens", "heads",  "heads_kv", "hidden"};

const CaseResult* find_case(const GuiState& s, std::uint64_t key, const std::string& id) {
  if (const StoredRun* r = s.run_by_key(key))
    for (const CaseResult& c : r->data.cases)
      if (c.case_id == id) return &c;
  return nullptr;
}

}  // namespace

void draw_plots_panel(GuiState& s) {
  PlotSettings& ps = s.settings.plot;
  bool changed = false;
  panel_header(s, "Plots");

  if (ImGui::BeginTabBar("plot_tabs")) {
    // The saved tab is selected once at start; afterwards the tab bar owns the choice.
    static bool first_frame = true;
    for (const TabDef& t : kTabs) {
      const bool selected_now = ps.tab == t.id;
      const ImGuiTabItemFlags flags = first_frame && selected_now ? ImGuiTabItemFlags_SetSelected : 0;
      if (ImGui::BeginTabItem(t.label, nullptr, flags)) {
        if (!selected_now && !first_frame) ps.tab = t.id, changed = true;
        ImGui::EndTabItem();
      }
      s.note_widget(std::string("tab_") + t.id);
    }
    first_frame = false;
    ImGui::EndTabBar();
  }

  // Controls: x axis, the tab's own choice, log axes, grouping, export.
  const float sc = s.fonts.scale();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("x");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110 * sc);
  if (ImGui::BeginCombo("##x", ps.x.c_str())) {
    for (const std::string& a : kNumericAxes)
      if (ImGui::Selectable(a.c_str(), a == ps.x)) {
        ps.x = a;
        std::erase(ps.group_by, a);
        changed = true;
      }
    ImGui::EndCombo();
  }
  s.note_widget("x_combo");
  if (ps.tab == "metric") {
    ImGui::SameLine();
    ImGui::TextUnformatted("y");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(170 * sc);
    if (ImGui::BeginCombo("##metric", ps.metric.c_str())) {
      for (const std::string& m : s.plot_metric_names)
        if (ImGui::Selectable(m.c_str(), m == ps.metric)) ps.metric = m, changed = true;
      ImGui::EndCombo();
    }
  }
  if (ps.tab == "speedup") {
    ImGui::SameLine();
    ImGui::TextUnformatted("over");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(150 * sc);
    std::set<std::string> kernels;
    for (const StoredRun& r : s.runs())
      for (const CaseResult& c : r.data.cases)
        if (c.status == Status::ok) kernels.insert(variant_label(c));
    if (ImGui::BeginCombo("##baseline", ps.baseline.empty() ? "run's baseline" : ps.baseline.c_str())) {
      if (ImGui::Selectable("run's baseline", ps.baseline.empty())) ps.baseline.clear(), changed = true;
      for (const std::string& k : kernels)
        if (ImGui::Selectable(k.c_str(), k == ps.baseline)) ps.baseline = k, changed = true;
      ImGui::EndCombo();
    }
  }
  ImGui::SameLine(0, 14);
  changed |= ImGui::Checkbox("log x", &ps.log_x);
  ImGui::SameLine();
  changed |= ImGui::Checkbox("log y", &ps.log_y);
  ImGui::SameLine(0, 14);
  const std::string group_label = ps.group_by.empty() ? "series: auto" : "series: kernel + " + [&] {
    std::string t;
    for (const std::string& g : ps.group_by) t += (t.empty() ? "" : ",") + g;
    return t;
  }();
  if (ImGui::Button(group_label.c_str())) ImGui::OpenPopup("group_by");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "One series per kernel and per value of these axes (auto: every axis that varies at a fixed x)");
  if (ImGui::BeginPopup("group_by")) {
    for (const std::string& a : plot::plot_axes()) {
      if (a == ps.x) continue;
      bool on = std::find(ps.group_by.begin(), ps.group_by.end(), a) != ps.group_by.end();
      if (ImGui::Checkbox(a.c_str(), &on)) {
        if (on)
          ps.group_by.push_back(a);
        else
          std::erase(ps.group_by, a);
        changed = true;
      }
    }
    if (ImGui::Button("auto")) ps.group_by.clear(), changed = true;
    ImGui::EndPopup();
  }
  ImGui::SameLine(0, 14);
  ImGui::SetNextItemWidth(120 * sc);
  const std::string facet_label = "panels: " + (ps.facet.empty() ? std::string("auto") : ps.facet);
  if (ImGui::BeginCombo("##facet", facet_label.c_str())) {
    for (const std::string& a : {std::string("none"), std::string("auto")})
      if (ImGui::Selectable(a.c_str(), a == ps.facet)) ps.facet = a, changed = true;
    for (const std::string& a : plot::plot_axes())
      if (a != ps.x && ImGui::Selectable(a.c_str(), a == ps.facet)) ps.facet = a, changed = true;
    ImGui::EndCombo();
  }
  s.note_widget("facet_combo");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Small multiples: one panel per value of an axis (auto: when many axes name the series)");
  ImGui::SameLine(0, 14);
  // The legend collapses for a crowded plot; hover still names each point's series and case.
  if (ImGui::Checkbox("legend", &ps.show_legend)) changed = true;
  ImGui::SameLine(0, 14);
  if (ImGui::Button("Export PNG\xe2\x80\xa6")) s.open_dialog(PathDialog::Kind::export_png);
  s.note_widget("export_png_button");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Render this plot offscreen at a chosen size (Ctrl+E)");
  const std::vector<std::string>& notes = !s.plot_panels.empty()
                                              ? s.plot_figure.notes
                                              : (s.plot.has_plot ? s.plot.plot.notes : s.plot_figure.notes);
  if (!notes.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("(%zu note%s)", notes.size(), notes.size() == 1 ? "" : "s");
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      for (const std::string& n : notes) ImGui::BulletText("%s", n.c_str());
      ImGui::EndTooltip();
    }
  }

  // Runs on show (several compare side by side; series then start with the run id).
  if (s.runs().size() > 1) {
    for (const StoredRun& r : s.runs()) {
      bool shown = r.shown;
      const std::string label = fmt::format("{}{}##run{}", r.label, r.live ? " (live)" : "", r.key);
      if (ImGui::Checkbox(label.c_str(), &shown)) s.set_run_shown(r.key, shown);
      ImGui::SameLine();
    }
    ImGui::NewLine();
  }

  // The plot, or its panels in a grid, with the selected case ringed; hover and click per panel.
  auto draw_one = [&](PlotWidget& w, const std::string& id, ImVec2 size, bool main) {
    std::optional<std::pair<std::size_t, std::size_t>> highlight;
    if (s.selection && w.has_plot) {
      for (std::size_t si = 0; si < w.plot.series.size() && !highlight; ++si) {
        const plot::Series& series = w.plot.series[si];
        if (series.run >= s.plot_run_keys.size() || s.plot_run_keys[series.run] != s.selection->run_key)
          continue;
        for (std::size_t i = 0; i < series.case_ids.size(); ++i)
          if (series.case_ids[i] == s.selection->case_id) highlight = std::pair{si, i};
      }
    }
    const PlotEvents ev = plot_widget(id.c_str(), w, s.fonts, size, highlight);
    const std::string name = main ? std::string("plot") : id.substr(2);
    s.note_widget(name + "_area", ImVec2(ev.plot_area.x0, ev.plot_area.y0),
                  ImVec2(ev.plot_area.x1, ev.plot_area.y1));
    s.note_widget(name + "_widget", ev.origin, ImVec2(ev.origin.x + size.x, ev.origin.y + size.y));
    if (w.has_plot && w.layout.legend_box.width() > 0) {
      const plot::Rect& b = w.layout.legend_box;
      s.note_widget(name + "_legend", ImVec2(ev.origin.x + b.x0, ev.origin.y + b.y0),
                    ImVec2(ev.origin.x + b.x1, ev.origin.y + b.y1));
    }
    auto case_of = [&](const plot::PointHit& h) -> std::pair<std::uint64_t, std::string> {
      const plot::Series& series = w.plot.series[h.series];
      if (h.index >= series.case_ids.size() || series.run >= s.plot_run_keys.size()) return {0, ""};
      return {s.plot_run_keys[series.run], series.case_ids[h.index]};
    };
    if (ev.hovered) {
      const auto [key, cid] = case_of(*ev.hovered);
      if (const CaseResult* c = find_case(s, key, cid)) {
        ImGui::BeginTooltip();
        ImGui::Text("%s  %s", variant_label(*c).c_str(), config_label(c->problem, c->knobs).c_str());
        if (c->timing)
          ImGui::TextDisabled("median %s, %s TFLOPS  (click to inspect)",
                              fmt_ms(c->timing->median_ms).c_str(), fmt_num(c->tflops).c_str());
        if (const StoredRun* run = s.run_by_key(key))
          for (const PluginRecord& lib : run->data.run.plugins)
            if (lib.version > 0 &&
                std::find(lib.kernels.begin(), lib.kernels.end(), c->kernel) != lib.kernels.end())
              ImGui::TextDisabled("v%d of %s, sha256 %s", lib.version, lib.watched.c_str(),
                                  lib.sha256.substr(0, 12).c_str());
        ImGui::EndTooltip();
      }
    }
    if (ev.clicked) {
      const auto [key, cid] = case_of(*ev.clicked);
      if (!cid.empty()) s.select(key, cid);
    }
  };
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (s.plot_panels.empty()) {
    draw_one(s.plot, "##plot", avail, true);
  } else {
    const std::size_t n = s.plot_panels.size();
    const std::size_t cols = n <= 2 ? n : n <= 4 ? 2 : 3;
    const std::size_t rows = (n + cols - 1) / cols;
    const float gap = 4 * sc;
    const ImVec2 cell((avail.x - gap * static_cast<float>(cols - 1)) / static_cast<float>(cols),
                      (avail.y - gap * static_cast<float>(rows - 1)) / static_cast<float>(rows));
    for (std::size_t i = 0; i < n; ++i) {
      if (i % cols != 0) ImGui::SameLine(0, gap);
      draw_one(s.plot_panels[i], "##panel" + std::to_string(i), cell, false);
    }
    // A free cell of the grid holds one legend for every panel (a small panel drops its own).
    if (n % cols != 0 && ps.show_legend) {
      ImGui::SameLine(0, gap);
      ImGui::BeginChild("##facet_legend", cell);
      std::vector<std::pair<std::string, plot::Color>> seen;
      for (const PlotWidget& w : s.plot_panels)
        for (const plot::Series& ser : w.plot.series)
          if (std::none_of(seen.begin(), seen.end(), [&](const auto& e) { return e.first == ser.label; }))
            seen.emplace_back(ser.label, ser.color);
      ImDrawList* dl = ImGui::GetWindowDrawList();
      const float box = ImGui::GetTextLineHeight() * 0.8f;
      for (const auto& [label, color] : seen) {
        const ImVec2 p0 = ImGui::GetCursorScreenPos();
        dl->AddRectFilled(ImVec2(p0.x, p0.y + box * 0.15f), ImVec2(p0.x + box, p0.y + box * 1.15f),
                          IM_COL32(color.r, color.g, color.b, 255));
        ImGui::Dummy(ImVec2(box, box));
        ImGui::SameLine();
        ImGui::TextUnformatted(label.c_str());
      }
      ImGui::EndChild();
      s.note_widget("facet_legend");
    }
  }

  if (changed) s.mark_plot_settings_changed();
}

}  // namespace attn::gui
