// Small multiples: when many parameters vary between series, one panel per value of one of them
// (head dim, mask, dtype, ...) instead of one crowded plot; each series keeps one style across
// panels. Rendered as one image (PNG or SVG) with the panels in a grid.
#pragma once
#include <string>
#include <vector>

#include "reports/plot/plot_build.hpp"
#include "reports/plot/raster.hpp"

namespace attn::plot {

struct Figure {
  std::string title, subtitle;
  std::string facet;         // the axis panels split on; empty for a single plot
  std::vector<Plot> panels;  // one, or one per facet value (panel title: "D=128")
  std::vector<std::string> notes;
};

// When to facet without --facet: more than `max_axes` axes name the series, or more than
// `max_series` series with at least two axes naming them.
struct FacetPolicy {
  std::size_t max_axes = 2;
  std::size_t max_series = 10;
};

// The axes preferred for panels, in order: the ones a reader compares within least.
const std::vector<std::string>& facet_preference();

// build_plot, then facets: `facet` "none" (one plot), "auto" (the first axis of
// facet_preference() that names series, when the policy asks for panels) or an axis name from
// plot_axes() that varies among the plotted cases. Panel series share styles by label.
// Throws PlotSpecError as build_plot does, and for a --facet axis that is unknown or has one value.
Figure build_figure(const std::vector<LoadedRun>& runs, const PlotSpec& spec,
                    const std::string& facet = "auto", const FacetPolicy& policy = {});

// The panels in a grid (1, 2, 2x2, 3 columns...) under the figure's title.
DrawList layout_figure(const Figure& figure, int width, int height, const TextMeasurer& fonts);
Image render_figure(const Figure& figure, int width, int height);
std::string render_figure_svg(const Figure& figure, int width, int height);

}  // namespace attn::plot
