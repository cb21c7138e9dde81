// build_figure(): the facet choice and per-panel plots; layout_figure(): the grid.
#include "reports/plot/plot_facets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/plot/plot_layout.hpp"
#include "reports/plot/svg.hpp"

namespace attn::plot {

const std::vector<std::string>& facet_preference() {
  static const std::vector<std::string> v{"head_dim", "mask",  "dtype", "seq_kv",     "heads",
                                          "heads_kv", "batch", "seq_q", "head_dim_v", "knobs"};
  return v;
}

Figure build_figure(const std::vector<LoadedRun>& runs, const PlotSpec& spec, const std::string& facet,
                    const FacetPolicy& policy) {
  Figure fig;
  Plot whole = build_plot(runs, spec);
  std::string axis;
  if (facet == "auto") {
    const std::size_t n_axes = whole.series_axes.size();
    if (n_axes > policy.max_axes || (n_axes >= 2 && whole.series.size() > policy.max_series))
      for (const std::string& a : facet_preference())
        if (std::find(whole.series_axes.begin(), whole.series_axes.end(), a) != whole.series_axes.end()) {
          axis = a;
          break;
        }
  } else if (facet != "none") {
    if (std::find(plot_axes().begin(), plot_axes().end(), facet) == plot_axes().end())
      throw PlotSpecError("--facet " + facet + ": unknown axis; allowed: auto, none, " + [] {
        std::string s;
        for (const std::string& a : plot_axes()) s += (s.empty() ? "" : ", ") + a;
        return s;
      }());
    if (facet == spec.x)
      throw PlotSpecError("--facet " + facet + ": that is the x axis; facet on another axis");
    axis = facet;
  }
  if (axis.empty()) {
    fig.title = whole.title;
    fig.notes = whole.notes;
    fig.panels.push_back(std::move(whole));
    return fig;
  }

  // Only the values the plotted cases take (the filters may have narrowed them).
  std::vector<std::pair<std::string, std::string>> values = axis_values(runs, axis);
  PlotSpec base = spec;
  std::erase_if(base.where, [&](const std::string& w) { return w.rfind(axis + "=", 0) == 0; });
  // The panels keep the whole plot's split (less the facet), so a label means the same in each.
  base.group_by.clear();
  for (const std::string& a : whole.series_axes)
    if (a != axis) base.group_by.push_back(a);
  if (base.group_by.empty()) base.group_by.push_back("dtype");  // a split on one value: kernels only
  std::map<std::string, std::size_t> style_of;
  for (const auto& [where, text] : values) {
    if (std::find(spec.where.begin(), spec.where.end(), axis + "=" + where) == spec.where.end() &&
        std::any_of(spec.where.begin(), spec.where.end(),
                    [&](const std::string& w) { return w.rfind(axis + "=", 0) == 0; }))
      continue;  // --where on this axis left this value out
    PlotSpec ps = base;
    ps.where.push_back(axis + "=" + where);
    Plot p;
    try {
      p = build_plot(runs, ps);
    } catch (const PlotSpecError&) {
      continue;  // nothing of this value survives the filters (a baseline-only value, say)
    }
    p.title = text;
    p.subtitle.clear();
    for (Series& s : p.series) {
      const auto [it, fresh] = style_of.emplace(s.label, style_of.size());
      s.set_style(series_style(it->second));
    }
    fig.panels.push_back(std::move(p));
  }
  if (fig.panels.size() < 2 && facet != "auto")
    throw PlotSpecError("--facet " + axis + ": the plotted cases have one value of " + axis +
                        "; facet on an axis that varies");
  if (fig.panels.size() < 2) {
    fig.title = whole.title;
    fig.notes = whole.notes;
    fig.panels = {std::move(whole)};
    return fig;
  }
  fig.facet = axis;
  fig.title = whole.title;
  fig.subtitle = whole.subtitle.empty() ? "one panel per " + axis_label(axis)
                                        : whole.subtitle + "; one panel per " + axis_label(axis);
  fig.notes = whole.notes;
  fig.notes.push_back(fmt::format("{} series over {} axes: one panel per {} ({} panels)", whole.series.size(),
                                  whole.series_axes.size(), axis, fig.panels.size()));
  return fig;
}

DrawList layout_figure(const Figure& fig, int width, int height, const TextMeasurer& fonts) {
  const auto w = static_cast<float>(width), h = static_cast<float>(height);
  if (fig.panels.size() == 1)
    return layout_plot(fig.panels[0], w, h, fonts, default_style(width, height)).draw;
  const std::size_t n = fig.panels.size();
  const std::size_t cols = n <= 3 ? n : n == 4 ? 2 : 3;
  const std::size_t rows = (n + cols - 1) / cols;
  const Style top = default_style(width, std::max(height / static_cast<int>(rows), 200));
  DrawList d;
  d.rect_filled({0, 0, w, h}, top.background);
  float y = top.s(top.pad);
  const float tpx = top.s(top.title_px), fpx = top.s(top.font_px);
  d.text({(w - fonts.text_width(fig.title, tpx, true)) / 2, y}, fig.title, top.text, tpx, true);
  y += tpx * 1.3f;
  if (!fig.subtitle.empty()) {
    d.text({(w - fonts.text_width(fig.subtitle, fpx, false)) / 2, y}, fig.subtitle, top.muted_text, fpx);
    y += fpx * 1.3f;
  }
  const float cw = w / static_cast<float>(cols), ch = (h - y) / static_cast<float>(rows);
  for (std::size_t i = 0; i < n; ++i) {
    const Vec2 origin{cw * static_cast<float>(i % cols), y + ch * static_cast<float>(i / cols)};
    const PlotLayout l = layout_plot(fig.panels[i], cw, ch, fonts,
                                     default_style(static_cast<int>(cw), static_cast<int>(ch)), origin);
    d.cmds.insert(d.cmds.end(), l.draw.cmds.begin(), l.draw.cmds.end());
  }
  return d;
}

Image render_figure(const Figure& fig, int width, int height) {
  const TtfFont& font = TtfFont::builtin();
  return rasterize(layout_figure(fig, width, height, font), width, height, font);
}

std::string render_figure_svg(const Figure& fig, int width, int height) {
  const TtfFont& font = TtfFont::builtin();
  return svg_document(layout_figure(fig, width, height, font), width, height, font);
}

}  // namespace attn::plot
