// The Inspector: everything about the selected case: timing distribution, throughput against the
// run's peaks, correctness, CUPTI metrics as bars against 100 %, roofline placement, launch stats,
// clocks, and the NVTX range with the ncu command to copy.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "app/gui/panels.hpp"
#include "profiling/field_catalogue.hpp"
#include "profiling/roofline.hpp"
#include "reports/report_md.hpp"
#include "reports/text_format.hpp"

namespace attn::gui {

namespace {

const ImVec4 kMuted{0.45f, 0.45f, 0.45f, 1};

void section(const char* title) {
  ImGui::Spacing();
  ImGui::TextColored(ImVec4(0.12f, 0.47f, 0.71f, 1), "%s", title);  // palette blue
  ImGui::Separator();
}

void not_collected(const std::string& why) {
  ImGui::TextColored(kMuted, "not collected%s%s", why.empty() ? "" : ": ", why.c_str());
}

// Two columns of name / value rows.
void kv(const char* name, const std::string& value) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextColored(kMuted, "%s", name);
  ImGui::TableSetColumnIndex(1);
  ImGui::TextUnformatted(value.c_str());
}

bool begin_kv(const char* id, float name_w) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingStretchProp)) return false;
  ImGui::TableSetupColumn("k", ImGuiTableColumnFlags_WidthFixed, name_w);
  ImGui::TableSetupColumn("v", ImGuiTableColumnFlags_WidthStretch);
  return true;
}

// A horizontal bar: `value` of `full`, with the value text at its right.
void bar(const char* name, double value, double full, const std::string& text, ImU32 color, float name_w) {
  ImGui::TextColored(kMuted, "%s", name);
  ImGui::SameLine(name_w);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = std::max(40.0f, ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(text.c_str()).x -
                                      ImGui::GetStyle().ItemSpacing.x);
  const float h = ImGui::GetTextLineHeight();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), IM_COL32(232, 232, 232, 255));
  const float f = full > 0 ? static_cast<float>(std::clamp(value / full, 0.0, 1.0)) : 0.0f;
  dl->AddRectFilled(p, ImVec2(p.x + w * f, p.y + h), color);
  ImGui::Dummy(ImVec2(w, h));
  ImGui::SameLine();
  ImGui::TextUnformatted(text.c_str());
}

// Box plot of the timing distribution: whiskers min..max, box q1..q3, median line, mean +- std.
void timing_plot(const TimingStats& t) {
  const float w = ImGui::GetContentRegionAvail().x, h = 46;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  double lo = std::min(t.min_ms, t.mean_ms - t.std_ms), hi = std::max(t.max_ms, t.mean_ms + t.std_ms);
  if (!(hi > lo)) hi = lo + std::max(1e-9, std::fabs(lo) * 0.01);
  const double pad = (hi - lo) * 0.06;
  lo -= pad;
  hi += pad;
  auto X = [&](double v) { return p.x + 8 + static_cast<float>((v - lo) / (hi - lo)) * (w - 16); };
  const float cy = p.y + 16;
  const ImU32 blue = IM_COL32(31, 119, 180, 255), light = IM_COL32(31, 119, 180, 60),
              dark = IM_COL32(40, 40, 40, 255);
  dl->AddLine(ImVec2(X(t.min_ms), cy), ImVec2(X(t.max_ms), cy), dark, 1.0f);
  dl->AddLine(ImVec2(X(t.min_ms), cy - 6), ImVec2(X(t.min_ms), cy + 6), dark, 1.0f);
  dl->AddLine(ImVec2(X(t.max_ms), cy - 6), ImVec2(X(t.max_ms), cy + 6), dark, 1.0f);
  dl->AddRectFilled(ImVec2(X(t.q1_ms), cy - 10), ImVec2(X(t.q3_ms), cy + 10), light);
  dl->AddRect(ImVec2(X(t.q1_ms), cy - 10), ImVec2(X(t.q3_ms), cy + 10), blue, 0, 0, 1.5f);
  dl->AddLine(ImVec2(X(t.median_ms), cy - 12), ImVec2(X(t.median_ms), cy + 12), blue, 3.0f);
  // Mean +- std as an orange bar under the box.
  const ImU32 orange = IM_COL32(255, 127, 14, 255);
  dl->AddLine(ImVec2(X(t.mean_ms - t.std_ms), cy + 17), ImVec2(X(t.mean_ms + t.std_ms), cy + 17), orange,
              2.0f);
  dl->AddCircleFilled(ImVec2(X(t.mean_ms), cy + 17), 3.5f, orange);
  const std::string l = fmt_ms(t.min_ms), r = fmt_ms(t.max_ms);
  dl->AddText(ImVec2(p.x + 4, p.y + h - 12), IM_COL32(110, 110, 110, 255), l.c_str());
  dl->AddText(ImVec2(p.x + w - ImGui::CalcTextSize(r.c_str()).x - 4, p.y + h - 12),
              IM_COL32(110, 110, 110, 255), r.c_str());
  ImGui::Dummy(ImVec2(w, h + 6));
  ImGui::TextColored(kMuted, "box q1..q3, blue line median, whiskers min..max, orange mean \xc2\xb1 std");
}

void plain_value(const char* name, const std::string& value, float name_w) {
  ImGui::TextColored(kMuted, "%s", name);
  ImGui::SameLine(name_w);
  ImGui::TextUnformatted(value.c_str());
}

void copy_line(const char* label, const std::string& text, const char* id) {
  ImGui::TextColored(kMuted, "%s", label);
  ImGui::SameLine();
  if (ImGui::SmallButton(id)) ImGui::SetClipboardText(text.c_str());
  ImGui::PushStyleColor(ImGuiCol_FrameBg, ImVec4(0.95f, 0.95f, 0.95f, 1));
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

}  // namespace

void draw_inspector_panel(GuiState& s) {
  const CaseResult* cp = s.selected_case();
  const StoredRun* run = s.selected_run();
  panel_header(s, "Inspector");
  if (!cp || !run) {
    ImGui::TextColored(kMuted, "Click a point in a plot or a row in the table to inspect a case.");
    return;
  }
  const CaseResult& c = *cp;
  const RunInfo& ri = run->data.run;
  const float sc = s.fonts.scale();
  const float name_w = 120 * sc;

  ImGui::BeginChild("inspector_scroll", ImVec2(0, 0), false);
  ImGui::PushFont(s.fonts.large());
  ImGui::TextUnformatted(variant_label(c).c_str());
  ImGui::PopFont();
  ImGui::SameLine();
  ImGui::TextColored(status_color(c.status), "  %s", std::string(to_string(c.status)).c_str());
  ImGui::TextUnformatted(config_label(c.problem, c.knobs).c_str());
  ImGui::TextColored(kMuted, "run %s  \xc2\xb7  case %s", run->label.c_str(), c.case_id.c_str());
  if (!c.reason.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(status_color(c.status), "%s", c.reason.c_str());
    ImGui::PopTextWrapPos();
  }

  section("Timing");
  if (c.timing) {
    const TimingStats& t = *c.timing;
    timing_plot(t);
    if (begin_kv("timing", name_w)) {
      kv("median", fmt_ms(t.median_ms));
      kv("mean \xc2\xb1 std", fmt_ms(t.mean_ms) + " \xc2\xb1 " + fmt_ms(t.std_ms));
      kv("min / max", fmt_ms(t.min_ms) + " / " + fmt_ms(t.max_ms));
      kv("samples",
         fmt::format(
             "{}{}", t.samples,
             t.launches_per_sample > 1 ? fmt::format(" x {} launches (graph)", t.launches_per_sample) : ""));
      kv("noise", fmt::format("{:.2f} % of the median ({})", t.noise_pct,
                              t.converged ? "converged" : "time budget hit"));
      ImGui::EndTable();
    }
  } else {
    not_collected(c.status == Status::ok ? "" : "the case was not timed");
  }

  section("Throughput");
  const auto ceil = ceilings_for(ri.peaks, c.problem.dtype);
  if (c.tflops) {
    if (ceil)
      bar("TFLOPS", *c.tflops, ceil->tflops,
          fmt::format("{} of {:.0f} ({})", fmt_num(c.tflops), ceil->tflops, ceil->source),
          IM_COL32(31, 119, 180, 255), name_w);
    else
      plain_value("TFLOPS", fmt_num(c.tflops), name_w);
  }
  if (c.gbps) {
    if (ceil)
      bar("GB/s (min bytes)", *c.gbps, ceil->gbps, fmt::format("{} of {:.0f}", fmt_num(c.gbps), ceil->gbps),
          IM_COL32(44, 160, 44, 255), name_w);
    else
      plain_value("GB/s", fmt_num(c.gbps), name_w);
  }
  if (begin_kv("work", name_w)) {
    kv("FLOPs", fmt::format("{:.4g}", c.flops));
    kv("min bytes", fmt::format("{:.4g} B", static_cast<double>(c.min_bytes)));
    if (c.queries_per_s) kv("queries/s", fmt_num(c.queries_per_s));
    if (c.padding_waste)  // a dense-bucketed case: FLOPs above are the real pairs
      kv("padding waste", fmt::format("{:.1f}% of launched pairs", 100.0 * *c.padding_waste));
    if (c.device_bytes_peak)
      kv("device memory", fmt::format("{:.1f} MiB", static_cast<double>(*c.device_bytes_peak) / 1048576.0));
    ImGui::EndTable();
  }
  if (!ceil)
    ImGui::TextColored(kMuted, "no peaks for %s in this run: throughput is not drawn against a ceiling",
                       std::string(to_string(c.problem.dtype)).c_str());

  section("Correctness");
  if (c.correctness) {
    const Correctness& k = *c.correctness;
    bar("rel L2 / tol", k.rel_l2, k.tol, fmt::format("{:.2e} of {:.2e}", k.rel_l2, k.tol),
        k.pass ? IM_COL32(44, 160, 44, 255) : IM_COL32(214, 39, 40, 255), name_w);
    if (begin_kv("corr", name_w)) {
      kv("verdict", k.pass ? "pass" : "FAIL");
      kv("max |err|", fmt::format("{:.3e}", k.max_abs));
      kv("reference", k.reference);
      kv("tolerance", k.tol_rule);
      if (k.nonfinite) kv("non-finite", std::to_string(k.nonfinite));
      if (k.sampled_rows)
        kv("sampled rows",
           fmt::format("{} (rel L2 {:.2e})", *k.sampled_rows, k.sampled_rows_rel_l2.value_or(0)));
      ImGui::EndTable();
    }
  } else {
    not_collected(ri.protocol.check ? "" : "the run skipped the check (--no-check)");
  }

  section("Hardware metrics (CUPTI)");
  if (c.metrics) {
    const KernelMetrics& m = c.metrics->aggregate;
    const ImU32 col = IM_COL32(148, 103, 189, 255);
    // Every metric of the field catalogue: percentages as bars, the others as values with units.
    for (const FieldDesc& f : case_fields())
      if (f.metric && f.unit.starts_with("%"))
        if (const auto& v = m.*f.metric)
          bar(std::string(f.label).c_str(), *v, 100, fmt::format("{:.1f} %", *v), col, name_w);
    if (begin_kv("metrics", name_w)) {
      for (const FieldDesc& f : case_fields()) {
        if (!f.metric || f.unit.starts_with("%")) continue;
        const auto& v = m.*f.metric;
        if (!v) continue;
        kv(std::string(f.label).c_str(),
           f.unit == "ns" ? fmt_ms(*v * 1e-6)
                          : fmt::format("{:.4g}{}{}", *v, f.unit.empty() ? "" : " ", f.unit));
      }
      if (m.dram_bytes && c.min_bytes > 0)
        kv("DRAM / min bytes", fmt::format("{:.2f}x", *m.dram_bytes / static_cast<double>(c.min_bytes)));
      for (const auto& [name, value] : m.extra) kv(name.c_str(), fmt::format("{:.4g}", value));
      kv("passes", fmt::format("{} replay passes, {:.2f} s", c.metrics->passes, c.metrics->wall_s));
      ImGui::EndTable();
    }
  } else {
    const std::string status(to_string(c.metrics_status));
    std::string why = !c.metrics_reason.empty()    ? status + ": " + c.metrics_reason
                      : !status.empty()            ? status
                      : !ri.metrics_reason.empty() ? ri.metrics_reason
                      : ri.backend == "cpu"        ? "CPU backend"
                                                   : "";
    not_collected(why);
  }

  section("Roofline");
  std::optional<Roofline> rl = c.roofline;
  const bool computed = !rl;
  if (!rl) rl = roofline_for(c, ri.peaks);
  if (rl) {
    if (begin_kv("roof", name_w)) {
      kv("intensity",
         fmt::format(
             "{:.1f} FLOP/B algorithmic{}", rl->algorithmic_intensity,
             rl->achieved_intensity ? fmt::format(", {:.1f} achieved", *rl->achieved_intensity) : ""));
      kv("ceiling", fmt::format("{:.0f} TFLOPS, {:.0f} GB/s ({}), ridge {:.0f} FLOP/B", rl->peak_tflops,
                                rl->peak_gbps, rl->peak_source, rl->ridge_intensity));
      kv("attainable", fmt::format("{:.1f} TFLOPS ({}-bound)", rl->attainable_tflops, rl->bound));
      if (rl->pct_of_roofline) kv("attained", fmt::format("{:.1f} % of the roofline", *rl->pct_of_roofline));
      ImGui::EndTable();
    }
    if (computed) ImGui::TextColored(kMuted, "computed here from the run's peaks (the record has none)");
  } else {
    not_collected(ri.backend == "cpu" ? "CPU runs have no tensor-core ceilings" : "the run records no peaks");
  }

  section("Launch");
  if (!c.launch.empty()) {
    if (ImGui::BeginTable(
            "launch", 6,
            ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp)) {
      for (const char* h : {"kernel", "grid", "block", "regs", "smem [B]", "occ. %"})
        ImGui::TableSetupColumn(h);
      ImGui::TableHeadersRow();
      for (const LaunchStats& l : c.launch) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextUnformatted(shorten(l.name, 40).c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", l.name.c_str());
        ImGui::TableSetColumnIndex(1);
        ImGui::Text("%lldx%lldx%lld", static_cast<long long>(l.grid[0]), static_cast<long long>(l.grid[1]),
                    static_cast<long long>(l.grid[2]));
        ImGui::TableSetColumnIndex(2);
        ImGui::Text("%lldx%lldx%lld", static_cast<long long>(l.block[0]), static_cast<long long>(l.block[1]),
                    static_cast<long long>(l.block[2]));
        ImGui::TableSetColumnIndex(3);
        ImGui::Text("%d%s", l.regs, l.local_bytes ? " (spills)" : "");
        ImGui::TableSetColumnIndex(4);
        ImGui::Text("%lld + %lld", static_cast<long long>(l.smem_static),
                    static_cast<long long>(l.smem_dynamic));
        ImGui::TableSetColumnIndex(5);
        ImGui::TextUnformatted(
            l.occupancy_theoretical ? fmt::format("{:.0f}", *l.occupancy_theoretical).c_str() : "-");
      }
      ImGui::EndTable();
    }
  } else {
    not_collected(ri.backend == "cpu"      ? "CPU backend"
                  : c.status != Status::ok ? "case not measured"
                                           : "no CUPTI activity");
  }

  if (c.clocks) {
    section("Clocks while timing");
    const Clocks& k = *c.clocks;
    if (begin_kv("clocks", name_w)) {
      if (k.sm_mhz)
        kv("SM", fmt::format("{:.0f} MHz{}", *k.sm_mhz,
                             k.sm_mhz_min ? fmt::format(" (min {:.0f})", *k.sm_mhz_min) : ""));
      if (k.mem_mhz) kv("memory", fmt::format("{:.0f} MHz", *k.mem_mhz));
      if (k.temp_c)
        kv("temperature", fmt::format("{:.0f} \xc2\xb0"
                                      "C",
                                      *k.temp_c));
      if (k.power_w) kv("power", fmt::format("{:.0f} W", *k.power_w));
      if (k.clocks_dropped && *k.clocks_dropped) kv("warning", "SM clock fell below 90 % while timing");
      ImGui::EndTable();
    }
  }

  section("Reproduce");
  if (!c.nvtx_range.empty()) copy_line("NVTX range", c.nvtx_range, "Copy##nvtx");
  const std::string ncu =
      !c.ncu_command.empty() ? c.ncu_command : single_case_command(c, ri.protocol, "attnscope", true);
  copy_line("Nsight Compute", ncu, "Copy##ncu");
  copy_line("rerun this case", single_case_command(c, ri.protocol, "attnscope", false), "Copy##rerun");
  ImGui::EndChild();
}

}  // namespace attn::gui
