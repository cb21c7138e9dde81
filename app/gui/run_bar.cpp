// The run bar (start, stop, progress, ETA, backend and device, clocks, temperature) and the status
// bar (backend in use, loaded runs, the latest message, frame time).
#include <fmt/format.h>

#include <cmath>

#include "app/gui/panels.hpp"

namespace attn::gui {

namespace {

std::string clock_text(double s) {
  const int t = static_cast<int>(std::lround(s));
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{}:{:02}", t / 60, t % 60);
}

}  // namespace

void draw_run_bar(GuiState& s) {
  const JobProgress& p = s.progress();
  const float h = ImGui::GetFrameHeight();
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(12, ImGui::GetStyle().FramePadding.y));
  ImGui::BeginDisabled(p.running);
  ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.17f, 0.63f, 0.17f, 1.0f));  // palette green
  ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImVec4(0.20f, 0.72f, 0.20f, 1.0f));
  ImGui::PushStyleColor(ImGuiCol_ButtonActive, ImVec4(0.13f, 0.52f, 0.13f, 1.0f));
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 1, 1, 1));
  if (ImGui::Button("\xe2\x96\xb6  Run")) s.start_sweep();
  ImGui::PopStyleColor(4);
  s.note_widget("run_button");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Run the sweep of the form (F5)");
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!p.running);
  if (ImGui::Button("\xe2\x96\xa0  Stop")) s.stop_job();
  s.note_widget("stop_button");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Stop (Esc): workers are killed, finished cases stay on disk and on screen");
  ImGui::EndDisabled();
  ImGui::PopStyleVar();

  ImGui::SameLine(0, 16);
  const float frac = p.total ? static_cast<float>(p.done) / static_cast<float>(p.total) : 0.0f;
  std::string label;
  if (p.kind.empty())
    label = "idle";
  else
    label = fmt::format("{} {}/{}  ({} ok{}{})", p.kind, p.done, p.total, p.ok,
                        p.failed ? fmt::format(", {} failed", p.failed) : "",
                        p.skipped ? fmt::format(", {} skipped", p.skipped) : "");
  ImGui::PushStyleColor(ImGuiCol_PlotHistogram,
                        p.failed ? ImVec4(0.84f, 0.15f, 0.16f, 1) : ImVec4(0.12f, 0.47f, 0.71f, 1));
  ImGui::ProgressBar(frac, ImVec2(340 * s.fonts.scale(), h), label.c_str());
  ImGui::PopStyleColor();
  s.note_widget("progress");

  ImGui::SameLine(0, 16);
  ImGui::AlignTextToFramePadding();
  if (p.running) {
    ImGui::Text("%s elapsed", clock_text(p.elapsed_s).c_str());
    ImGui::SameLine(0, 12);
    ImGui::TextDisabled("ETA %s", p.eta_s ? clock_text(*p.eta_s).c_str() : "--:--");
  } else if (!p.kind.empty()) {
    ImGui::TextDisabled("%s", p.message.c_str());
  } else {
    ImGui::TextDisabled("F5 runs the sweep on the left; Ctrl+O opens saved results");
  }

  // Right side: backend, device, clocks and temperature of the latest case.
  std::string right = p.backend.empty() ? (s.cuda_available ? "cuda" : "cpu") : p.backend;
  if (!p.device.empty()) right += "  \xc2\xb7  " + p.device;
  if (p.clocks) {
    const Clocks& c = *p.clocks;
    if (c.sm_mhz) right += fmt::format("  \xc2\xb7  SM {:.0f} MHz", *c.sm_mhz);
    if (c.temp_c)
      right += fmt::format(
          "  \xc2\xb7  {:.0f} \xc2\xb0"
          "C",
          *c.temp_c);
    if (c.power_w) right += fmt::format("  \xc2\xb7  {:.0f} W", *c.power_w);
  }
  const float w = ImGui::CalcTextSize(right.c_str()).x;
  const float avail = ImGui::GetContentRegionMax().x;
  ImGui::SameLine(std::max(ImGui::GetCursorPosX() + 20, avail - w));
  ImGui::TextUnformatted(right.c_str());
  if (p.running && !p.current.empty()) {
    ImGui::TextDisabled("measuring %s", p.current.c_str());
  }
}

void draw_status_bar(GuiState& s) {
  const ImGuiIO& io = ImGui::GetIO();
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("backend: %s", s.backend_note.c_str());
  ImGui::SameLine(0, 20);
  std::size_t cases = 0;
  for (const StoredRun& r : s.runs()) cases += r.data.cases.size();
  ImGui::TextDisabled("%zu run%s, %zu cases", s.runs().size(), s.runs().size() == 1 ? "" : "s", cases);
  if (!s.toasts.empty()) {
    const Toast& t = s.toasts.back();
    ImGui::SameLine(0, 20);
    ImGui::PushStyleColor(ImGuiCol_Text,
                          t.error ? ImVec4(0.75f, 0.1f, 0.1f, 1) : ImGui::GetStyleColorVec4(ImGuiCol_Text));
    ImGui::TextUnformatted(t.text.c_str());
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered() && s.toasts.size() > 1) {
      ImGui::BeginTooltip();
      for (std::size_t i = s.toasts.size() > 12 ? s.toasts.size() - 12 : 0; i < s.toasts.size(); ++i)
        ImGui::TextColored(s.toasts[i].error ? ImVec4(0.75f, 0.1f, 0.1f, 1) : ImVec4(0.2f, 0.2f, 0.2f, 1),
                           "%s", s.toasts[i].text.c_str());
      ImGui::EndTooltip();
    }
  }
  const std::string fps = fmt::format("{:.1f} ms/frame", 1000.0f / std::max(io.Framerate, 1.0f));
  ImGui::SameLine(std::max(ImGui::GetCursorPosX() + 20,
                           ImGui::GetContentRegionMax().x - ImGui::CalcTextSize(fps.c_str()).x));
  ImGui::TextDisabled("%s", fps.c_str());
}

}  // namespace attn::gui
