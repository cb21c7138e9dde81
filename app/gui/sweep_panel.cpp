// The Sweep panel: preset, backend, kernel checklist with capability hints and skip reasons, axes
// (lists and ranges, dtype, causal, window, GQA), protocol knobs, metrics on/off, the planning
// preview and the equivalent `attnscope run` command.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>

#include "app/gui/panels.hpp"
#include "kernels/registry.hpp"
#include "profiling/sweep/preset.hpp"
#include "profiling/sweep/variant.hpp"

namespace attn::gui {

namespace {

// The hint shown in an empty field: the preset's value, else what the default means.
std::string field_hint(const GuiState& s, const FormField& f) {
  if (s.preview.valid) {
    const std::string t = spec_field_text(s.preview.spec, f.key);
    if (!t.empty()) return t;
  }
  const std::string key = f.key;
  if (key == "heads_kv") return "= heads";
  if (key == "seq_kv") return "= seq";
  if (key == "head_dim_v") return "= head dim";
  if (key == "window" || key == "compress" || key == "select" || key == "varlen") return "none";
  if (key == "causal") return "0";
  if (key == "pass") return "fwd";
  if (key == "dtype") return s.preview.backend == Backend::cpu ? "fp32" : "fp16";
  return "";
}

bool text_field(GuiState& s, const FormField& f) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(f.label);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s  (%s)", f.help, f.flag);
  ImGui::TableSetColumnIndex(1);
  ImGui::SetNextItemWidth(-1);
  const std::string hint = field_hint(s, f);
  const bool changed =
      ImGui::InputTextWithHint(fmt::format("##{}", f.key).c_str(), hint.c_str(), &(s.settings.form.*f.text));
  s.note_widget(std::string("field_") + f.key);
  return changed;
}

std::vector<std::string> checked_kernels(const GuiState& s) {
  if (!s.settings.form.kernels.empty()) return s.settings.form.kernels;
  return s.preview.valid ? s.preview.spec.kernels : std::vector<std::string>{};
}

// Where the cases run: worker commands (one per line), devices, shard; each worker's state and
// device while a sweep runs; Resume for a stopped run directory.
void draw_workers(GuiState& s, bool& changed) {
  SweepForm& form = s.settings.form;
  ImGui::Spacing();
  ImGui::TextDisabled("WORKERS");
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "One worker command per line, e.g. ssh gpu-host attnscope worker (the GUI host keeps the\n"
        "results as they stream in); 'local' = this program. Empty = one local worker.\n"
        "Each command x each device is one worker; cases go to whichever is free.");
  changed |=
      ImGui::InputTextMultiline("##workers", &form.workers, ImVec2(-1, ImGui::GetTextLineHeight() * 3.4f));
  s.note_widget("field_workers");
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Devices");
  ImGui::SameLine(90 * s.fonts.scale());
  ImGui::SetNextItemWidth(120 * s.fonts.scale());
  changed |= ImGui::InputTextWithHint("##devices", "0", &form.devices);
  s.note_widget("field_devices");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("--devices: 0,1 or all (one worker per device and command)");
  ImGui::SameLine();
  ImGui::TextUnformatted("Shard");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  changed |= ImGui::InputTextWithHint("##shard", "k/n", &form.shard);
  s.note_widget("field_shard");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("--shard k/n: run only that slice of the plan (merge joins them)");

  const JobProgress& p = s.progress();
  if (!p.workers.empty() &&
      ImGui::BeginTable("workers", 4, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("worker");
    ImGui::TableSetupColumn("state");
    ImGui::TableSetupColumn("device");
    ImGui::TableSetupColumn("cases", ImGuiTableColumnFlags_WidthFixed);
    for (const WorkerStatus& w : p.workers) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(w.label.c_str());
      ImGui::TableSetColumnIndex(1);
      const bool bad = w.state == WorkerStatus::State::given_up;
      if (bad) ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.75f, 0.1f, 0.1f, 1));
      ImGui::TextUnformatted(std::string(to_string(w.state)).c_str());
      if (bad) ImGui::PopStyleColor();
      if (ImGui::IsItemHovered() && !w.last.empty()) ImGui::SetTooltip("%s", w.last.c_str());
      ImGui::TableSetColumnIndex(2);
      ImGui::TextUnformatted(w.host.empty() ? w.device.c_str() : (w.device + " @ " + w.host).c_str());
      ImGui::TableSetColumnIndex(3);
      ImGui::Text("%zu", w.cases_done);
    }
    ImGui::EndTable();
  }
  ImGui::BeginDisabled(p.running);
  if (ImGui::Button("Resume\xe2\x80\xa6")) s.open_dialog(PathDialog::Kind::resume_sweep);
  s.note_widget("resume_button");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Continue a stopped run folder (its plan and protocol) on these workers");
  ImGui::EndDisabled();
}

}  // namespace

void draw_sweep_panel(GuiState& s) {
  SweepForm& form = s.settings.form;
  bool changed = false;
  panel_header(s, "Sweep");

  // Preset.
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Preset");
  ImGui::SameLine(90 * s.fonts.scale());
  ImGui::SetNextItemWidth(-80 * s.fonts.scale());
  if (ImGui::BeginCombo("##preset", form.preset.empty() ? "(none: fields only)" : form.preset.c_str())) {
    if (ImGui::Selectable("(none: fields only)", form.preset.empty())) form.preset.clear(), changed = true;
    for (const std::string& p : s.presets)
      if (ImGui::Selectable(p.c_str(), p == form.preset)) {
        form.preset = p;
        // A new preset brings its own kernels, axes and protocol: clear the overrides.
        const std::string backend = form.backend;
        form = SweepForm{};
        form.preset = p;
        form.backend = backend;
        changed = true;
      }
    ImGui::EndCombo();
  }
  s.note_widget("preset_combo");
  if (ImGui::IsItemHovered() && s.preview.valid && !s.preview.spec.description.empty())
    ImGui::SetTooltip("%s", s.preview.spec.description.c_str());
  ImGui::SameLine();
  if (ImGui::Button("Save\xe2\x80\xa6")) s.open_dialog(PathDialog::Kind::save_preset);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Save the form as a preset TOML (docs/presets.md)");

  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Backend");
  ImGui::SameLine(90 * s.fonts.scale());
  for (const char* b : {"auto", "cpu", "cuda"}) {
    ImGui::BeginDisabled(std::string(b) == "cuda" && !s.cuda_available);
    if (ImGui::RadioButton(b, form.backend == b)) form.backend = b, changed = true;
    if (std::string(b) == "cuda" && !s.cuda_available &&
        ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", s.backend_note.c_str());
    ImGui::EndDisabled();
    ImGui::SameLine();
  }
  ImGui::NewLine();

  // Kernels.
  ImGui::Spacing();
  ImGui::TextDisabled("KERNELS");
  const std::vector<std::string> checked = checked_kernels(s);
  std::map<std::string, std::size_t> planned;
  for (const Case& c : s.preview.cases) ++planned[c.kernel];
  // An entry is a kernel variant ("fa2.mma@br=64", from a preset); its checkbox is its kernel's.
  auto kernel_of = [](const std::string& entry) { return entry.substr(0, entry.find(kVariantMark)); };
  for (const KernelSpec* kp : listed_kernels()) {
    const KernelSpec& k = *kp;
    bool on = std::any_of(checked.begin(), checked.end(),
                          [&](const std::string& e) { return kernel_of(e) == k.id; });
    const bool other_backend = s.preview.valid && k.backend != s.preview.backend;
    if (other_backend) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    if (ImGui::Checkbox(k.id.c_str(), &on)) {
      std::vector<std::string> next = checked;
      if (on)
        next.push_back(k.id);
      else
        std::erase_if(next, [&](const std::string& e) { return kernel_of(e) == k.id; });
      // Keep registry order, so the plan and plots list kernels the same way every time; a kernel's
      // variants keep their order.
      std::vector<std::string> ordered;
      for (const KernelSpec* r : listed_kernels())
        for (const std::string& e : next)
          if (kernel_of(e) == r->id) ordered.push_back(e);
      form.kernels = ordered;
      if (!form.baseline.empty() && std::none_of(ordered.begin(), ordered.end(), [&](const std::string& e) {
            return same_variant(e, form.baseline);
          }))
        form.baseline.clear();
      changed = true;
    }
    s.note_widget("kernel_" + k.id);
    if (other_backend) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::TextUnformatted(k.description.c_str());
      ImGui::TextDisabled("backend: %s", std::string(to_string(k.backend)).c_str());
      for (const KnobSpec& knob : k.knobs)
        ImGui::TextDisabled("knob %s (default %d): %s", knob.name.c_str(), knob.default_value,
                            knob.help.c_str());
      if (other_backend)
        ImGui::TextColored(ImVec4(0.7f, 0.35f, 0, 1), "needs the %s backend; this sweep uses %s",
                           std::string(to_string(k.backend)).c_str(),
                           std::string(to_string(s.preview.backend)).c_str());
      ImGui::EndTooltip();
    }
    // Capability hint: how many of its planned cases are skipped, and why (hover).
    if (on && s.preview.valid) {
      const auto it = s.preview.skip_reasons.find(k.id);
      std::size_t skipped = 0;
      if (it != s.preview.skip_reasons.end())
        for (const auto& [reason, n] : it->second) skipped += static_cast<std::size_t>(n);
      ImGui::SameLine();
      if (skipped == 0) {
        ImGui::TextDisabled("%zu cases", planned[k.id]);
      } else {
        ImGui::TextColored(ImVec4(0.7f, 0.35f, 0.0f, 1), "%zu of %zu skipped", skipped, planned[k.id]);
        if (ImGui::IsItemHovered()) {
          ImGui::BeginTooltip();
          for (const auto& [reason, n] : it->second) ImGui::Text("%d x %s", n, reason.c_str());
          ImGui::EndTooltip();
        }
      }
    }
  }
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Baseline");
  ImGui::SameLine(90 * s.fonts.scale());
  ImGui::SetNextItemWidth(-1);
  const std::string base_shown = !form.baseline.empty() ? form.baseline
                                 : s.preview.valid && !s.preview.spec.baseline.empty()
                                     ? s.preview.spec.baseline + " (preset)"
                                     : std::string("(none)");
  if (ImGui::BeginCombo("##baseline", base_shown.c_str())) {
    if (ImGui::Selectable("(preset's)", form.baseline.empty())) form.baseline.clear(), changed = true;
    for (const std::string& k : checked)
      if (ImGui::Selectable(k.c_str(), k == form.baseline)) form.baseline = k, changed = true;
    ImGui::EndCombo();
  }

  // Axes.
  ImGui::Spacing();
  ImGui::TextDisabled("AXES");
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Lists 64,128; ranges 320:1024:64 (stop included); geometric 512:16384:x2.\n"
        "An empty field keeps the preset's value (shown in grey).");
  if (ImGui::BeginTable("axes", 2, ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, 86 * s.fonts.scale());
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    for (const FormField& f : axis_fields()) changed |= text_field(s, f);
    ImGui::EndTable();
  }

  // Protocol.
  ImGui::Spacing();
  if (ImGui::CollapsingHeader("Measurement protocol")) {
    if (ImGui::BeginTable("protocol", 2, ImGuiTableFlags_SizingStretchProp)) {
      ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, 86 * s.fonts.scale());
      ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
      for (const FormField& f : protocol_form_fields())
        if (std::string(f.key) != "metrics") changed |= text_field(s, f);
      ImGui::EndTable();
    }
    bool check = form.no_check != "1";
    if (ImGui::Checkbox("correctness check", &check)) form.no_check = check ? "" : "1", changed = true;
    ImGui::SameLine();
    bool graphs = form.graphs == "1";
    if (ImGui::Checkbox("CUDA graphs", &graphs)) form.graphs = graphs ? "1" : "", changed = true;
  }
  bool metrics = form.metrics != "none";
  if (ImGui::Checkbox("CUPTI metrics (cuda)", &metrics)) form.metrics = metrics ? "" : "none", changed = true;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "A replay pass after timing collects SM, DRAM, L2, tensor-pipe and occupancy metrics\n"
        "(cuda backend; never perturbs the timing)");
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Output");
  ImGui::SameLine(90 * s.fonts.scale());
  ImGui::SetNextItemWidth(-1);
  changed |= ImGui::InputTextWithHint("##out", "runs/<run-id>", &form.out);
  draw_workers(s, changed);
  draw_watch_section(s);

  // Planning preview.
  ImGui::Spacing();
  ImGui::Separator();
  if (s.preview.valid) {
    const std::size_t measured = s.preview.cases.size() - s.preview.skipped;
    ImGui::Text("%zu cases on %s", s.preview.cases.size(), std::string(to_string(s.preview.backend)).c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("(%zu measured, %zu skipped)", measured, s.preview.skipped);
  } else {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.75f, 0.1f, 0.1f, 1));
    ImGui::TextWrapped("%s", s.preview.error.c_str());
    ImGui::PopStyleColor();
  }
  const std::string cmd = command_line(form);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s", cmd.c_str());
  ImGui::PopStyleColor();
  if (ImGui::SmallButton("Copy command")) ImGui::SetClipboardText(cmd.c_str());

  if (changed) s.mark_form_changed();
}

}  // namespace attn::gui
