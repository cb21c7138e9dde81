// The Results panel: every case of the shown runs in a sortable, filterable table with status
// colours; a click selects the case in the plots, roofline and inspector.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>

#include "app/gui/panels.hpp"
#include "reports/plot/units.hpp"
#include "reports/text_format.hpp"

namespace attn::gui {

namespace {

enum Column { kStatus, kKernel, kConfig, kMedian, kTflops, kGbps, kNoise, kRelL2, kRun, kColumns };

double sort_value(const CaseResult& c, int col) {
  const double none = -1e300;  // absent values sort first ascending
  switch (col) {
    case kMedian:
      return c.timing ? c.timing->median_ms : none;
    case kTflops:
      return c.tflops.value_or(none);
    case kGbps:
      return c.gbps.value_or(none);
    case kNoise:
      return c.timing ? c.timing->noise_pct : none;
    case kRelL2:
      return c.correctness ? c.correctness->rel_l2 : none;
    default:
      return 0;
  }
}

std::string sort_text(const StoredRun& r, const CaseResult& c, int col) {
  switch (col) {
    case kStatus:
      return std::string(to_string(c.status));
    case kKernel:
      return variant_label(c);
    case kConfig:
      return config_label(c.problem, c.knobs);
    case kRun:
      return r.label;
    default:
      return {};
  }
}

void rebuild_rows(GuiState& s) {
  GuiState::TableView& v = s.table_view;
  v.rows.clear();
  for (const StoredRun& r : s.runs()) {
    if (!r.shown) continue;
    for (std::size_t i = 0; i < r.data.cases.size(); ++i)
      if (table_row_visible(s, r, r.data.cases[i])) v.rows.emplace_back(r.key, i);
  }
  if (v.sort_column < 0) return;
  const int col = v.sort_column;
  const bool numeric = col == kMedian || col == kTflops || col == kGbps || col == kNoise || col == kRelL2;
  auto get = [&](const std::pair<std::uint64_t, std::size_t>& row)
      -> std::pair<const StoredRun*, const CaseResult*> {
    const StoredRun* r = s.run_by_key(row.first);
    return {r, &r->data.cases[row.second]};
  };
  std::stable_sort(v.rows.begin(), v.rows.end(), [&](const auto& a, const auto& b) {
    const auto [ra, ca] = get(a);
    const auto [rb, cb] = get(b);
    bool less;
    if (numeric) {
      const double x = sort_value(*ca, col), y = sort_value(*cb, col);
      if (x == y) return false;
      less = x < y;
    } else {
      const std::string x = sort_text(*ra, *ca, col), y = sort_text(*rb, *cb, col);
      if (x == y) return false;
      less = x < y;
    }
    return v.ascending ? less : !less;
  });
}

}  // namespace

bool table_row_visible(const GuiState& s, const StoredRun& run, const CaseResult& c) {
  if (s.table_hide_skipped && c.status == Status::skipped) return false;
  if (!s.table_filter.IsActive()) return true;
  const std::string text = fmt::format("{} {} {} {} {}", to_string(c.status), variant_label(c),
                                       config_label(c.problem, c.knobs), run.label, c.reason);
  return s.table_filter.PassFilter(text.c_str());
}

void draw_results_panel(GuiState& s) {
  std::size_t total = 0;
  for (const StoredRun& r : s.runs())
    if (r.shown) total += r.data.cases.size();
  GuiState::TableView& v = s.table_view;
  panel_header(s, "Results", fmt::format("{} of {} cases", v.rows.size(), total).c_str());

  const float sc = s.fonts.scale();
  ImGui::SetNextItemWidth(260 * sc);
  s.table_filter.Draw("##filter", 260 * sc);
  s.note_widget("table_filter");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Filter rows: words match kernel, shape, status, run, reason\n(\"cudnn\", \"-skipped\", "
        "\"causal,fp16\" = either)");
  ImGui::SameLine();
  ImGui::Checkbox("hide skipped", &s.table_hide_skipped);
  ImGui::SameLine();
  if (ImGui::Button("Export CSV\xe2\x80\xa6")) s.open_dialog(PathDialog::Kind::export_csv);
  ImGui::SameLine();
  if (ImGui::Button("Export JSONL\xe2\x80\xa6")) s.open_dialog(PathDialog::Kind::export_jsonl);

  const bool several = s.runs().size() > 1;
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_Hideable |
                                ImGuiTableFlags_SizingStretchProp;
  // One unit per column, scaled to its largest value: never "12.1 ms" above "45.6 µs", and GFLOPS
  // for CPU runs.
  const plot::UnitScale &t_unit = s.results_time_unit(), &f_unit = s.results_flops_unit();
  const std::string median_header = "median [" + t_unit.unit + "]";
  if (!ImGui::BeginTable("results", kColumns, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("status", ImGuiTableColumnFlags_WidthFixed, 70 * sc, kStatus);
  ImGui::TableSetupColumn("kernel", ImGuiTableColumnFlags_WidthStretch, 1.2f, kKernel);
  ImGui::TableSetupColumn("config", ImGuiTableColumnFlags_WidthStretch, 2.2f, kConfig);
  ImGui::TableSetupColumn(median_header.c_str(), ImGuiTableColumnFlags_WidthFixed, 84 * sc, kMedian);
  ImGui::TableSetupColumn(f_unit.unit.c_str(), ImGuiTableColumnFlags_WidthFixed, 66 * sc, kTflops);
  ImGui::TableSetupColumn("GB/s", ImGuiTableColumnFlags_WidthFixed, 66 * sc, kGbps);
  ImGui::TableSetupColumn("noise %", ImGuiTableColumnFlags_WidthFixed, 60 * sc, kNoise);
  ImGui::TableSetupColumn("rel L2", ImGuiTableColumnFlags_WidthFixed, 70 * sc, kRelL2);
  ImGui::TableSetupColumn(
      "run", (several ? 0 : ImGuiTableColumnFlags_DefaultHide) | ImGuiTableColumnFlags_WidthStretch, 1.0f,
      kRun);
  ImGui::TableHeadersRow();

  bool dirty = v.data_revision != s.data_revision() || v.filter != s.table_filter.InputBuf ||
               v.hide_skipped != s.table_hide_skipped;
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsDirty) {
    if (specs->SpecsCount > 0) {
      v.sort_column = static_cast<int>(specs->Specs[0].ColumnUserID);
      v.ascending = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
    } else {
      v.sort_column = -1;
    }
    specs->SpecsDirty = false;
    dirty = true;
  }
  if (dirty) {
    rebuild_rows(s);
    v.data_revision = s.data_revision();
    v.filter = s.table_filter.InputBuf;
    v.hide_skipped = s.table_hide_skipped;
  }

  int scroll_to = -1;
  if (s.scroll_table_to_selection && s.selection) {
    for (std::size_t i = 0; i < v.rows.size(); ++i) {
      const StoredRun* r = s.run_by_key(v.rows[i].first);
      if (r && v.rows[i].first == s.selection->run_key &&
          r->data.cases[v.rows[i].second].case_id == s.selection->case_id)
        scroll_to = static_cast<int>(i);
    }
    s.scroll_table_to_selection = false;
  }
  if (scroll_to >= 0)
    ImGui::SetScrollY(
        std::max(0.0f, scroll_to * ImGui::GetTextLineHeightWithSpacing() - ImGui::GetWindowHeight() / 3));

  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(v.rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const auto [key, idx] = v.rows[static_cast<std::size_t>(i)];
      const StoredRun* r = s.run_by_key(key);
      if (!r || idx >= r->data.cases.size()) continue;
      const CaseResult& c = r->data.cases[idx];
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(kStatus);
      const bool selected = s.selection && s.selection->run_key == key && s.selection->case_id == c.case_id;
      ImGui::PushID(i);
      ImGui::PushStyleColor(ImGuiCol_Text, status_color(c.status));
      if (ImGui::Selectable(std::string(to_string(c.status)).c_str(), selected,
                            ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap))
        s.select(key, c.case_id);
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered() && !c.reason.empty()) ImGui::SetTooltip("%s", c.reason.c_str());
      if (i == 0) s.note_widget("table_first_row");
      ImGui::PopID();
      ImGui::TableSetColumnIndex(kKernel);
      ImGui::TextUnformatted(variant_label(c).c_str());
      ImGui::TableSetColumnIndex(kConfig);
      ImGui::TextUnformatted(config_label(c.problem, c.knobs).c_str());
      ImGui::TableSetColumnIndex(kMedian);
      ImGui::TextUnformatted(c.timing ? format_fixed4(c.timing->median_ms * t_unit.factor).c_str() : "-");
      ImGui::TableSetColumnIndex(kTflops);
      ImGui::TextUnformatted(c.tflops ? format_fixed4(*c.tflops * f_unit.factor).c_str() : "-");
      ImGui::TableSetColumnIndex(kGbps);
      ImGui::TextUnformatted(fmt_num(c.gbps).c_str());
      ImGui::TableSetColumnIndex(kNoise);
      ImGui::TextUnformatted(c.timing ? fmt::format("{:.2f}", c.timing->noise_pct).c_str() : "-");
      ImGui::TableSetColumnIndex(kRelL2);
      if (c.correctness) {
        const bool pass = c.correctness->pass;
        ImGui::TextColored(pass ? ImGui::GetStyleColorVec4(ImGuiCol_Text) : ImVec4(0.84f, 0.15f, 0.16f, 1),
                           "%.2e", c.correctness->rel_l2);
      } else {
        ImGui::TextUnformatted("-");
      }
      ImGui::TableSetColumnIndex(kRun);
      ImGui::TextUnformatted(r->label.c_str());
    }
  }
  ImGui::EndTable();
}

}  // namespace attn::gui
