// Look helpers shared by the panels: status colours, panel headers, number formats.
#include <fmt/format.h>

#include <cmath>

#include "app/gui/panels.hpp"
#include "reports/text_format.hpp"

namespace attn::gui {

ImVec4 status_color(Status st) {
  // Palette colours (tab10) where one fits: ok green, failures red, oom/timeout orange.
  switch (st) {
    case Status::ok:
      return ImVec4(0.17f, 0.55f, 0.17f, 1);
    case Status::skipped:
      return ImVec4(0.55f, 0.55f, 0.55f, 1);
    case Status::mismatch:
      return ImVec4(0.84f, 0.15f, 0.16f, 1);
    case Status::fault:
      return ImVec4(0.84f, 0.15f, 0.16f, 1);
    case Status::error:
      return ImVec4(0.84f, 0.15f, 0.16f, 1);
    case Status::oom:
      return ImVec4(0.85f, 0.45f, 0.05f, 1);
    case Status::timeout:
      return ImVec4(0.85f, 0.45f, 0.05f, 1);
  }
  return ImVec4(0, 0, 0, 1);
}

void panel_header(GuiState& s, const char* title, const char* right_text) {
  ImGui::PushFont(s.fonts.ui_bold());
  ImGui::TextUnformatted(title);
  ImGui::PopFont();
  if (right_text) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", right_text);
  }
  ImGui::Separator();
}

std::string fmt_ms(double ms) {
  if (!std::isfinite(ms)) return "-";
  return format_duration_ms(ms);
}

std::string fmt_num(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "-";
  // CPU runs measure thousandths of a TFLOPS: keep 3 significant digits there, not "0.000".
  if (*v != 0 && std::fabs(*v) < 0.01) return fmt::format("{:.3g}", *v);
  return format_fixed4(*v);
}

std::string short_config(const CaseResult& c) { return config_label(c.problem, c.knobs); }

}  // namespace attn::gui
