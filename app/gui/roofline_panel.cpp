// The Roofline panel: log-log, measured and datasheet ceilings with their ridge points labelled,
// every measured case of the selected (else newest) run as a point styled by kernel, at its
// measured DRAM intensity (algorithmic where none was counted); hover names the case, a click
// selects it.
#include <fmt/format.h>

#include "app/gui/panels.hpp"
#include "reports/text_format.hpp"

namespace attn::gui {

namespace {

// The case a roofline point stands for: roofline_plot records each point's case id.
const CaseResult* case_at(const GuiState& s, const plot::PointHit& hit) {
  const StoredRun* r = s.run_by_key(s.roofline_run_key);
  if (!r || hit.series >= s.roofline.plot.series.size()) return nullptr;
  const plot::Series& series = s.roofline.plot.series[hit.series];
  if (hit.index >= series.case_ids.size()) return nullptr;
  for (const CaseResult& c : r->data.cases)
    if (c.case_id == series.case_ids[hit.index]) return &c;
  return nullptr;
}

}  // namespace

void draw_roofline_panel(GuiState& s) {
  panel_header(s, "Roofline", s.roofline_title.empty() ? nullptr : s.roofline_title.c_str());
  if (ImGui::SmallButton("Export PNG\xe2\x80\xa6##roof"))
    s.open_dialog(PathDialog::Kind::export_roofline_png);
  ImGui::SameLine();
  if (ImGui::Checkbox("algorithmic intensity", &s.roofline_algorithmic)) s.mark_roofline_changed();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Off: flops / DRAM bytes CUPTI measured (falls back to this where none were counted).\n"
        "On: flops / minimum bytes (Q, K, V read once, O written once).");
  ImGui::SameLine();
  if (ImGui::Checkbox("legend##roof", &s.roofline.plot.show_legend)) ++s.roofline.revision;

  std::optional<std::pair<std::size_t, std::size_t>> highlight;
  const CaseResult* sel = s.selected_case();
  if (sel && s.selection->run_key == s.roofline_run_key && s.roofline.has_plot) {
    // The DRAM placement (the filled marker) is ringed, not the hollow L2 one.
    for (std::size_t si = 0; si < s.roofline.plot.series.size() && !highlight; ++si) {
      const plot::Series& series = s.roofline.plot.series[si];
      if (series.hollow) continue;
      for (std::size_t i = 0; i < series.case_ids.size(); ++i)
        if (series.case_ids[i] == sel->case_id) highlight = std::pair{si, i};
    }
  }
  const PlotEvents ev =
      plot_widget("##roofline", s.roofline, s.fonts, ImGui::GetContentRegionAvail(), highlight);
  s.note_widget("roofline_area", ImVec2(ev.plot_area.x0, ev.plot_area.y0),
                ImVec2(ev.plot_area.x1, ev.plot_area.y1));
  if (ev.hovered) {
    if (const CaseResult* c = case_at(s, *ev.hovered)) {
      ImGui::BeginTooltip();
      ImGui::Text("%s  %s", variant_label(*c).c_str(), config_label(c->problem, c->knobs).c_str());
      ImGui::TextDisabled(
          "%.1f FLOP/B, %s TFLOPS%s", ev.hovered->x, fmt_num(c->tflops).c_str(),
          c->roofline && c->roofline->pct_of_roofline
              ? fmt::format(", {:.0f} % of the roofline", *c->roofline->pct_of_roofline).c_str()
              : "");
      ImGui::EndTooltip();
    }
  }
  if (ev.clicked) {
    if (const CaseResult* c = case_at(s, *ev.clicked)) s.select(s.roofline_run_key, c->case_id);
  }
}

}  // namespace attn::gui
