// The sweep panel's "Watched kernel files" section (hot reload, kernel_watch.hpp): a file to watch,
// and per file its versions, newest first, with their state; a compile error lists NVRTC's
// diagnostics, and clicking one shows the lines around it.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <fstream>

#include "app/gui/panels.hpp"

namespace attn::gui {

namespace {

ImVec4 state_color(WatchVersion::State st) {
  switch (st) {
    case WatchVersion::State::done:
      return status_color(Status::ok);
    case WatchVersion::State::compile_error:
    case WatchVersion::State::load_error:
      return status_color(Status::error);
    case WatchVersion::State::superseded:
      return ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
    default:
      return status_color(Status::skipped);
  }
}

// Lines line-2 .. line+2 of `file`, the diagnostic's line marked.
std::string context_lines(const std::string& file, int line) {
  std::ifstream in(file);
  std::string text, l;
  for (int n = 1; std::getline(in, l); ++n)
    if (n >= line - 2 && n <= line + 2) text += fmt::format("{}{:5} | {}\n", n == line ? ">" : " ", n, l);
  return text.empty() ? "(the file no longer has line " + std::to_string(line) + ")" : text;
}

void draw_version(GuiState& s, const WatchVersion& v) {
  ImGui::PushStyleColor(ImGuiCol_Text, state_color(v.state));
  ImGui::Text("v%d  %s  %s", v.number, v.sha256.substr(0, 8).c_str(), to_string(v.state));
  ImGui::PopStyleColor();
  if (!v.message.empty() && v.state != WatchVersion::State::compile_error) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", v.message.c_str());
  }
  for (std::size_t i = 0; i < v.diagnostics.size(); ++i) {
    const CompileDiagnostic& d = v.diagnostics[i];
    const std::string id = fmt::format("{}:{}:{}", v.number, d.line, i);
    const bool open = s.watch_open_diagnostic == id;
    const std::string text =
        fmt::format("  {}:{}:{}: {}: {}", std::filesystem::path(d.file).filename().string(), d.line, d.column,
                    d.severity, d.message);
    if (ImGui::Selectable((text + "##" + id).c_str(), open)) s.watch_open_diagnostic = open ? "" : id;
    if (i == 0) s.note_widget("watch_first_diagnostic");
    if (open) ImGui::TextUnformatted(context_lines(d.file, d.line).c_str());
  }
}

}  // namespace

void draw_watch_section(GuiState& s) {
  if (!ImGui::CollapsingHeader("Watched kernel files",
                               s.watch.files().empty() ? 0 : ImGuiTreeNodeFlags_DefaultOpen))
    return;
  ImGui::SetNextItemWidth(-70 * s.fonts.scale());
  const bool enter = ImGui::InputTextWithHint("##watch_path", "a plug-in .so or kernel source .cu",
                                              &s.watch_path_input, ImGuiInputTextFlags_EnterReturnsTrue);
  s.note_widget("watch_path");
  ImGui::SameLine();
  if ((ImGui::Button("Watch") || enter) && !s.watch_path_input.empty() && s.watch_file(s.watch_path_input))
    s.watch_path_input.clear();
  s.note_widget("watch_button");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Each save of the file loads a new version (in fresh workers) and reruns the current sweep\n"
        "for its kernels only: every version is its own series, my.kernel@v2, beside the others.\n"
        "A version that does not compile or fails the check never replaces a good one.");
  for (const WatchedFile& f : s.watch.files()) {
    std::string ids;
    for (const std::string& k : f.kernels) ids += (ids.empty() ? "" : ", ") + k;
    ImGui::TextUnformatted(std::filesystem::path(f.path).filename().string().c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", f.path.c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("%s", ids.c_str());
    for (auto v = f.versions.rbegin(); v != f.versions.rend(); ++v) draw_version(s, *v);
  }
}

}  // namespace attn::gui
