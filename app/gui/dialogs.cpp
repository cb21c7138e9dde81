// The path dialogs (open results, exports, save preset) with a small folder browser, and the
// shortcuts help window.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <filesystem>

#include "app/gui/panels.hpp"

namespace attn::gui {

namespace {

namespace fs = std::filesystem;
using Kind = PathDialog::Kind;

const char* title_of(Kind k) {
  switch (k) {
    case Kind::open:
      return "Open results";
    case Kind::export_png:
      return "Export plot as PNG";
    case Kind::export_roofline_png:
      return "Export roofline as PNG";
    case Kind::export_csv:
      return "Export table as CSV";
    case Kind::export_jsonl:
      return "Export run as JSONL";
    case Kind::export_report:
      return "Export Markdown report (folder)";
    case Kind::save_preset:
      return "Save sweep preset";
    case Kind::resume_sweep:
      return "Resume sweep (run folder)";
    case Kind::none:
      break;
  }
  return "";
}

bool is_png(Kind k) { return k == Kind::export_png || k == Kind::export_roofline_png; }

// Folder listing: sub-folders, and for Open the results files (and run folders holding one).
void browser(GuiState& s) {
  PathDialog& d = s.dialog;
  std::error_code ec;
  ImGui::TextDisabled("%s", d.browse_dir.string().c_str());
  ImGui::BeginChild("browse", ImVec2(0, 220 * s.fonts.scale()), true);
  if (ImGui::Selectable("../")) d.browse_dir = d.browse_dir.parent_path();
  std::vector<fs::directory_entry> entries;
  for (fs::directory_iterator it(d.browse_dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec))
    entries.push_back(*it);
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.path().filename() < b.path().filename(); });
  for (const fs::directory_entry& e : entries) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(".")) continue;
    const bool dir = e.is_directory(ec);
    const bool run_dir = dir && fs::exists(e.path() / "results.jsonl", ec);
    if (!dir && (d.kind == Kind::open || d.kind == Kind::resume_sweep) && e.path().extension() != ".jsonl")
      continue;
    const std::string label = dir ? name + "/" + (run_dir ? "   (run)" : "") : name;
    if (ImGui::Selectable(label.c_str(), false, ImGuiSelectableFlags_AllowDoubleClick)) {
      if (dir && !(run_dir && d.kind == Kind::open))
        d.browse_dir = e.path();
      else
        d.path = fs::relative(e.path(), fs::current_path(), ec).string();
      if (run_dir && d.kind == Kind::open) d.path = fs::relative(e.path(), fs::current_path(), ec).string();
      if (dir && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) d.browse_dir = e.path();
    }
  }
  ImGui::EndChild();
}

bool accept(GuiState& s) {
  PathDialog& d = s.dialog;
  if (d.path.empty()) {
    d.error = "enter a path";
    return false;
  }
  switch (d.kind) {
    case Kind::open:
      return s.open_results(d.path);
    case Kind::export_png:
    case Kind::export_roofline_png:
      if (d.width < 64 || d.height < 64 || d.width > 8192 || d.height > 8192) {
        d.error = fmt::format("size {}x{}: each side must be 64..8192 px", d.width, d.height);
        return false;
      }
      return s.export_plot_png(d.path, d.width, d.height, d.kind == Kind::export_roofline_png);
    case Kind::export_csv:
      return s.export_csv(d.path);
    case Kind::export_jsonl:
      return s.export_jsonl(d.path);
    case Kind::export_report:
      return s.export_report(d.path);
    case Kind::save_preset:
      return s.save_preset(d.path);
    case Kind::resume_sweep:
      return s.resume_sweep(d.path);
    case Kind::none:
      break;
  }
  return false;
}

}  // namespace

void draw_dialogs(GuiState& s) {
  PathDialog& d = s.dialog;
  if (d.kind != Kind::none) {
    const char* title = title_of(d.kind);
    if (d.just_opened) {
      ImGui::OpenPopup(title);
      d.just_opened = false;
    }
    ImGui::SetNextWindowSize(ImVec2(560 * s.fonts.scale(), 0), ImGuiCond_Appearing);
    if (ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_NoSavedSettings)) {
      bool ok = false;
      ImGui::TextUnformatted(d.kind == Kind::export_report || d.kind == Kind::resume_sweep ? "Folder"
                                                                                           : "Path");
      ImGui::SetNextItemWidth(-1);
      if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
      ok |= ImGui::InputText("##path", &d.path, ImGuiInputTextFlags_EnterReturnsTrue);
      s.note_widget("dialog_path");
      if (is_png(d.kind)) {
        ImGui::TextUnformatted("Size [px]");
        ImGui::SetNextItemWidth(120 * s.fonts.scale());
        ImGui::InputInt("##w", &d.width, 0);
        s.note_widget("dialog_width");
        ImGui::SameLine();
        ImGui::TextUnformatted("x");
        ImGui::SameLine();
        ImGui::SetNextItemWidth(120 * s.fonts.scale());
        ImGui::InputInt("##h", &d.height, 0);
        s.note_widget("dialog_height");
        for (const auto& [w, h] : {std::pair{800, 500}, std::pair{1600, 1000}, std::pair{2400, 1500}}) {
          ImGui::SameLine();
          if (ImGui::SmallButton(fmt::format("{}x{}", w, h).c_str())) d.width = w, d.height = h;
        }
        ImGui::TextDisabled("rendered offscreen at this size, with the screen's zoom and legend toggles");
      }
      browser(s);
      if (!d.error.empty()) ImGui::TextColored(ImVec4(0.75f, 0.1f, 0.1f, 1), "%s", d.error.c_str());
      ok |= ImGui::Button(d.kind == Kind::open ? "Open" : "Save", ImVec2(110 * s.fonts.scale(), 0));
      s.note_widget("dialog_ok");
      ImGui::SameLine();
      const bool cancel = ImGui::Button("Cancel", ImVec2(110 * s.fonts.scale(), 0)) ||
                          ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false);
      if (ok && accept(s)) {
        d.kind = Kind::none;
        ImGui::CloseCurrentPopup();
      } else if (ok && d.error.empty() && !s.toasts.empty() && s.toasts.back().error) {
        d.error = s.toasts.back().text;
      }
      if (cancel) {
        d.kind = Kind::none;
        ImGui::CloseCurrentPopup();
      }
      ImGui::EndPopup();
    } else {
      d.kind = Kind::none;
    }
  }

  if (s.show_help) {
    ImGui::SetNextWindowSize(ImVec2(460 * s.fonts.scale(), 0), ImGuiCond_Appearing);
    if (ImGui::Begin("Keyboard shortcuts", &s.show_help, ImGuiWindowFlags_NoCollapse)) {
      const char* rows[][2] = {{"F5", "run the sweep"},
                               {"Esc", "stop the sweep or replay"},
                               {"Ctrl+O", "open results"},
                               {"Ctrl+E", "export the plot as PNG"},
                               {"Ctrl+Shift+E", "export the table as CSV"},
                               {"F12", "screenshot of the window (--screenshot path, else screenshots/)"},
                               {"Ctrl+Q", "quit"},
                               {"wheel", "zoom (over an axis: that axis only)"},
                               {"drag", "pan"},
                               {"double-click", "fit the data"},
                               {"click a legend entry", "hide or show its series"},
                               {"click a point or row", "inspect the case"}};
      for (const auto& r : rows) {
        ImGui::TextUnformatted(r[0]);
        ImGui::SameLine(150 * s.fonts.scale());
        ImGui::TextDisabled("%s", r[1]);
      }
    }
    ImGui::End();
  }
}

}  // namespace attn::gui
