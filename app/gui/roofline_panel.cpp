// The Roofline panel: log-log, measured and datasheet ceilings labelled, every measured case of
// the selected (else newest) run coloured by kernel; hover names the case, a click selects it.
#include <fmt/format.h>

#include "app/gui/panels.hpp"
#include "reports/text_format.hpp"

namespace attn::gui {

namespace {

// The case a roofline point stands for: same kernel, intensity and TFLOPS (the plot is built
// from exactly these values, so equality is exact).
const CaseResult* case_at(const GuiState& s, const plot::Series& series, double x, double y) {
  const StoredRun* r = s.run_by_key(s.roofline_run_key);
  if (!r || series.kernel.empty()) return nullptr;
  for (const CaseResult& c : r->data.cases)
    if (variant_label(c) == series.kernel && c.tflops && *c.tflops == y && c.min_bytes > 0 &&
        c.flops / static_cast<double>(c.min_bytes) == x)
      return &c;
  return nullptr;
}

}  // namespace

void draw_roofline_panel(GuiState& s) {
  panel_header(s, "Roofline", s.roofline_title.empty() ? nullptr : s.roofline_title.c_str());
  if (ImGui::SmallButton("Export PNG\xe2\x80\xa6##roof"))
    s.open_dialog(PathDialog::Kind::export_roofline_png);

  std::optional<std::pair<std::size_t, std::size_t>> highlight;
  const CaseResult* sel = s.selected_case();
  if (sel && s.selection->run_key == s.roofline_run_key && s.roofline.has_plot && sel->tflops &&
      sel->min_bytes > 0) {
    const double x = sel->flops / static_cast<double>(sel->min_bytes);
    for (std::size_t si = 0; si < s.roofline.plot.series.size(); ++si) {
      const plot::Series& series = s.roofline.plot.series[si];
      if (series.kernel != variant_label(*sel)) continue;
      for (std::size_t i = 0; i < series.x.size(); ++i)
        if (series.x[i] == x && series.y[i] == *sel->tflops) highlight = std::pair{si, i};
    }
  }
  const PlotEvents ev =
      plot_widget("##roofline", s.roofline, s.fonts, ImGui::GetContentRegionAvail(), highlight);
  s.note_widget("roofline_area", ImVec2(ev.plot_area.x0, ev.plot_area.y0),
                ImVec2(ev.plot_area.x1, ev.plot_area.y1));
  if (ev.hovered) {
    const plot::Series& series = s.roofline.plot.series[ev.hovered->series];
    if (const CaseResult* c = case_at(s, series, ev.hovered->x, ev.hovered->y)) {
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
    const plot::Series& series = s.roofline.plot.series[ev.clicked->series];
    if (const CaseResult* c = case_at(s, series, ev.clicked->x, ev.clicked->y))
      s.select(s.roofline_run_key, c->case_id);
  }
}

}  // namespace attn::gui
