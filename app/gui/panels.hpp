// The panels of the workbench, one file each, all drawing from GuiState; plus the few look
// helpers they share (status colours, number formats).
#pragma once
#include <imgui.h>

#include <string>

#include "app/gui/gui_state.hpp"

namespace attn::gui {

void draw_menu_bar(GuiState& s);         // main_window.cpp
void draw_run_bar(GuiState& s);          // run_bar.cpp
void draw_status_bar(GuiState& s);       // run_bar.cpp
void draw_sweep_panel(GuiState& s);      // sweep_panel.cpp
void draw_watch_section(GuiState& s);    // watch_panel.cpp (inside the sweep panel)
void draw_plots_panel(GuiState& s);      // plots_panel.cpp
void draw_results_panel(GuiState& s);    // results_panel.cpp
void draw_inspector_panel(GuiState& s);  // inspector_panel.cpp
// The tabbed panels of the right column's lower slot (roofline_panel.cpp, ...), one per line of
// panel_list.def.
#define ATTN_PANEL(id, title) void draw_##id##_panel(GuiState& s);
#include "app/gui/panel_list.def"
#undef ATTN_PANEL
void draw_dialogs(GuiState& s);      // dialogs.cpp
void handle_shortcuts(GuiState& s);  // main_window.cpp

// Whether the Results panel's filter shows this case (CSV export writes the same rows).
bool table_row_visible(const GuiState& s, const StoredRun& run, const CaseResult& c);

// Status colours (text), consistent across the table, inspector and run bar.
ImVec4 status_color(Status st);
// A panel title line in the bold face, with a thin rule under it.
void panel_header(GuiState& s, const char* title, const char* right_text = nullptr);
// "1.23 ms" / "45.6 µs"; "-" when absent.
std::string fmt_ms(double ms);
// 4 significant digits; "-" when absent.
std::string fmt_num(std::optional<double> v);
// A short problem label: "B2 H16 S8192 D128 fp16 causal".
std::string short_config(const CaseResult& c);

}  // namespace attn::gui
