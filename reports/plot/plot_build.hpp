// From results to a Plot: which problem axis goes on x, which measurement on y (TFLOPS, speedup
// over a baseline kernel, latency, bandwidth or any metric in the records), and how cases split
// into series (one per kernel and per group of the other axes).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "reports/jsonl_store.hpp"
#include "reports/plot/plot_model.hpp"

namespace attn::plot {

// A PlotSpec that the results cannot satisfy: the message names the flag, the value and what is
// allowed (the CLI prints it and exits 2).
class PlotSpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct PlotSpec {
  std::string x = "seq";              // a name from plot_axes()
  std::string y = "tflops";           // tflops | speedup | latency | gbps | a metric from plot_metrics()
  std::string baseline;               // speedup reference kernel; empty = the run record's baseline
  std::vector<std::string> group_by;  // axes that split series; empty = every axis that varies at a fixed x
  std::vector<std::string> kernels;   // plot only these kernels' cases; empty = every kernel
  std::vector<std::string> where;     // "AXIS=VALUE": plot only cases with that value (see build_plot)
  bool log_x = false, log_y = false;
  PlotKind kind = PlotKind::line;
  std::string title;  // empty = "<GPU>: <y> vs <x>"
};

// The x / group-by axes: batch, tokens, heads, heads_kv, hidden, seq, seq_q, seq_kv, head_dim,
// head_dim_v, dtype, causal, window, mask, pass, knobs. dtype, causal, window, mask, pass and knobs are
// categorical (x only with --kind bars).
const std::vector<std::string>& plot_axes();

// The human name of an axis of plot_axes(): "Sequence length" for seq, "Head dimension" for
// head_dim; an unknown name comes back as it is.
std::string axis_label(const std::string& axis);

// The values `axis` takes among the ok cases, in order (numeric, else by label): each as --where
// takes it ("128", "causal") and as a label shows it ("D=128", "causal"). Throws PlotSpecError
// for an unknown axis.
std::vector<std::pair<std::string, std::string>> axis_values(const std::vector<LoadedRun>& runs,
                                                             const std::string& axis);

// The y names the runs can plot: tflops, speedup, latency, gbps, then every further numeric
// field present in at least one ok case (median_ms, noise_pct, rel_l2, sm_mhz, power_w, CUPTI
// metrics such as dram_throughput_pct, roofline pct_of_roofline, ...), sorted.
std::vector<std::string> plot_metrics(const std::vector<LoadedRun>& runs);

// One series per (run, kernel, values of the group axes) over the ok cases, sorted by x, coloured
// palette_color(i) in order; "kernel" is the variant_label (two knob settings of a kernel are two
// series). Speedup = the fastest ok median of the baseline variant on the same Problem in the same
// run / the case's median; the baseline's own series is left out and a reference line marks 1.
// Several cases at one x in a series (an axis that varies but is not grouped) keep the best value;
// plot.notes says so, and what was dropped. When a kernel appears in several of the runs, every
// label starts with its run id. Filters pick the plotted cases (the baseline is looked up among
// all of them): `kernels` (an id keeps all its variants, a variant label just that one), and
// `where` entries AXIS=VALUE on any axis of plot_axes(), a number for numeric axes, the label text
// for categorical ones (dtype fp16, mask causal, causal 0|1, ...); entries on one axis are
// alternatives, different axes must all hold. Throws PlotSpecError for an unknown axis or metric,
// a categorical x with --kind line, no baseline, a kernel or where value that no case has, or
// nothing left to plot.
Plot build_plot(const std::vector<LoadedRun>& runs, const PlotSpec& spec);

// The seed's file names: "<GPU>_<kernel>_Speedup.png" for --y speedup with exactly one kernel
// besides the baseline, else "<GPU>.png"; GPU = the first run's GPU name with spaces as '_',
// "CPU" for a CPU run.
std::string default_plot_filename(const std::vector<LoadedRun>& runs, const PlotSpec& spec, const Plot& plot);

}  // namespace attn::plot
