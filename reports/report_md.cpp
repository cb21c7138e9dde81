// markdown_report(): every section of the report, and the observation rules (see report_md.hpp
// and docs/reports.md).
#include "reports/report_md.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "reports/result_json.hpp"
#include "reports/text_format.hpp"

namespace attn {

using nlohmann::json;

namespace {

constexpr std::array kAllStatuses{Status::ok,    Status::skipped, Status::mismatch, Status::oom,
                                  Status::fault, Status::timeout, Status::error};

// A table cell: one line, pipes escaped.
std::string cell(std::string_view s) {
  std::string out;
  for (const char c : one_line(s)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string or_missing(const std::string& s, const char* missing = "not recorded") {
  return s.empty() ? std::string(missing) : cell(s);
}

// 1234567 -> "1.23 M", with k/M/G/T steps of 1000.
std::string si(double v) {
  if (!std::isfinite(v)) return format_fixed4(v);
  static constexpr std::array<const char*, 5> kUnit{"", " k", " M", " G", " T"};
  std::size_t i = 0;
  while (std::fabs(v) >= 999.5 && i + 1 < kUnit.size()) v /= 1000.0, ++i;
  return format_fixed4(v) + kUnit[i];
}

std::string gib(std::int64_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1u << 30));
}
std::string mib(std::int64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1u << 20));
}

std::optional<double> median_of(const CaseResult& c) {
  if (!c.timing || !(c.timing->median_ms > 0)) return std::nullopt;
  return c.timing->median_ms;
}

bool measured(const CaseResult& c) { return c.status == Status::ok && median_of(c).has_value(); }

template <class T>
void add_unique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// The fastest ok `baseline` median on exactly this problem.
std::optional<double> baseline_median(const std::vector<CaseResult>& cases, const std::string& baseline,
                                      const Problem& p) {
  std::optional<double> best;
  if (baseline.empty()) return best;
  for (const CaseResult& c : cases) {
    if (variant_label(c) != baseline || !measured(c) || !(c.problem == p)) continue;
    if (!best || *median_of(c) < *best) best = median_of(c);
  }
  return best;
}

// "h100/results.jsonl": the run directory names a results file better than its fixed file name.
std::string display_name(const std::filesystem::path& f) {
  if (f.filename() == "results.jsonl" && f.has_parent_path() && !f.parent_path().filename().empty())
    return (f.parent_path().filename() / f.filename()).string();
  return f.filename().string();
}

std::string regime_of(const Problem& p) { return std::string(to_string(p.dtype)) + " " + p.mask_label(); }

// ---- sections -------------------------------------------------------------------------------

std::string environment(const ResultSet& set) {
  const RunInfo& r = set.primary();
  std::string out = "## Environment\n\n| item | value |\n| --- | --- |\n";
  auto row = [&](const std::string& k, const std::string& v) { out += "| " + k + " | " + v + " |\n"; };
  row("backend", or_missing(r.backend));
  if (r.gpu) {
    const GpuInfo& g = *r.gpu;
    row("GPU", fmt::format("{} (compute capability {}.{}, {} SMs, {} memory, {} L2{})", cell(g.name),
                           g.cc_major, g.cc_minor, g.sms, gib(g.mem_bytes), mib(g.l2_bytes),
                           g.pci_bus_id.empty() ? "" : ", PCI " + g.pci_bus_id));
    std::string clocks;
    if (g.sm_clock_mhz) clocks += fmt::format("SM {:.0f} MHz", *g.sm_clock_mhz);
    if (g.mem_clock_mhz)
      clocks += fmt::format("{}memory {:.0f} MHz", clocks.empty() ? "" : ", ", *g.mem_clock_mhz);
    if (g.mem_bus_bits)
      clocks += fmt::format("{}{:.0f}-bit bus", clocks.empty() ? "" : ", ", *g.mem_bus_bits);
    row("clocks", clocks.empty() ? "not recorded" : clocks + " (at the start of the run)");
  } else {
    row("GPU", "none (CPU backend)");
  }
  auto peak = [](const std::optional<double>& v, const char* unit) {
    return v ? format_fixed4(*v) + " " + unit : std::string("not measured in this run");
  };
  auto sheet = [](const std::optional<double>& v, const char* unit) {
    return v ? format_fixed4(*v) + " " + unit : std::string("no datasheet entry for this device");
  };
  row("memory bandwidth", "measured " + peak(r.peaks.dram_gbps_measured, "GB/s") + "; datasheet " +
                              sheet(r.peaks.dram_gbps_datasheet, "GB/s"));
  row("tensor peak (fp16/bf16 dense)", "measured " + peak(r.peaks.tensor_tflops_measured, "TFLOPS") +
                                           "; datasheet " + sheet(r.peaks.tensor_tflops_datasheet, "TFLOPS"));
  row("driver", or_missing(r.driver));
  row("CUDA runtime", or_missing(r.cuda_runtime));
  row("cuDNN", or_missing(r.cudnn));
  row("CUPTI", or_missing(r.cupti));
  row("host", fmt::format("{}; {}{}", or_missing(r.host), or_missing(r.cpu_model, "CPU not recorded"),
                          r.cpu_threads > 0 ? fmt::format(" ({} threads)", r.cpu_threads) : ""));
  if (!r.os.empty()) row("OS", r.os);
  row("attnscope", fmt::format("{} (commit {})", or_missing(r.version), or_missing(r.git_commit)));
  row("run", fmt::format("{}, started {}", or_missing(r.run_id), or_missing(r.started_at)));
  if (set.sources.size() > 1) {
    out +=
        "\nSources (joined into this report; the first one's environment is shown above):\n\n"
        "| file | run | version | started | cases |\n| --- | --- | --- | --- | ---: |\n";
    for (const ResultSource& s : set.sources)
      out += fmt::format("| {} | {} | {} | {} | {} |\n", cell(display_name(s.file)), cell(s.run.run_id),
                         cell(s.run.version), cell(s.run.started_at), s.cases);
  }
  return out + "\n";
}

std::string protocol_text(const Protocol& p, const std::string& backend) {
  std::string out;
  const bool gpu = backend != "cpu";
  out += fmt::format(
      "- Timing: {}{}.\n",
      gpu ? "CUDA events around each launch on one stream" : "the host's steady clock around each call",
      p.graphs ? fmt::format(", launches batched into one CUDA graph per sample ({})",
                             p.graph_batch > 0 ? fmt::format("{} launches", p.graph_batch)
                                               : std::string("about 1 ms per sample"))
               : std::string(", one launch per sample"));
  out += fmt::format("- Warm-up: {} ms of back-to-back launches (at least one) before sampling.\n",
                     format_fixed4(p.warmup_ms));
  out += fmt::format(
      "- Samples: at least {}, at most {}; sampling stops when the relative standard error of the median "
      "is at most {}% or after {} s (then with at least 3 samples, `converged` = false).\n",
      p.min_samples, p.max_samples, format_fixed4(p.noise_pct), format_fixed4(p.max_time_s));
  out += fmt::format(
      "- Inputs: standard normal, seed {}, rounded to the dtype; the output is poisoned (NaN) "
      "before the check run.\n",
      p.seed);
  out += gpu ? fmt::format("- L2: {}.\n",
                           p.l2 == L2Mode::cold
                               ? "cold: a buffer of twice the L2's size is read through L2 before every "
                                 "sample (evicting the case's lines), outside the timed region"
                               : "warm: no flush between samples")
             : std::string();
  out += fmt::format("- Check: {}.\n",
                     p.check ? "every case is checked against a reference before it is timed; a "
                               "mismatch is recorded and not timed"
                             : "off (--no-check): nothing was checked");
  out +=
      "- Excluded from the timed region: host-device copies, input generation, the reference and the check, "
      "the L2 flush, and hardware-counter replay.\n";
  return out;
}

bool same_protocol(const Protocol& a, const Protocol& b) {
  return a.warmup_ms == b.warmup_ms && a.min_samples == b.min_samples && a.max_samples == b.max_samples &&
         a.max_time_s == b.max_time_s && a.noise_pct == b.noise_pct && a.l2 == b.l2 && a.graphs == b.graphs &&
         a.graph_batch == b.graph_batch && a.seed == b.seed && a.check == b.check;
}

std::string protocol(const ResultSet& set) {
  std::string out = "## Protocol\n\n" + protocol_text(set.primary().protocol, set.primary().backend);
  std::vector<int> samples;
  std::size_t ok = 0, converged = 0;
  std::set<std::string> references;
  for (const CaseResult& c : set.cases) {
    if (c.correctness && !c.correctness->reference.empty()) references.insert(c.correctness->reference);
    if (!measured(c)) continue;
    ++ok;
    samples.push_back(c.timing->samples);
    if (c.timing->converged) ++converged;
  }
  if (!samples.empty()) {
    std::sort(samples.begin(), samples.end());
    out += fmt::format(
        "- Observed: {} to {} samples per measured case (median {}); {} of {} measured cases "
        "reached the noise target.\n",
        samples.front(), samples.back(), samples[samples.size() / 2], converged, ok);
  }
  if (!references.empty()) {
    std::string list;
    for (const auto& r : references) list += (list.empty() ? "`" : ", `") + r + "`";
    out += "- References used by the checks: " + list + ".\n";
  }
  for (std::size_t i = 1; i < set.sources.size(); ++i) {
    const ResultSource& s = set.sources[i];
    if (same_protocol(s.run.protocol, set.primary().protocol)) {
      out += fmt::format("- `{}` used the same protocol.\n", display_name(s.file));
    } else {
      out += fmt::format("\nProtocol of `{}`:\n\n", display_name(s.file));
      out += protocol_text(s.run.protocol, s.run.backend);
    }
  }
  return out + "\n";
}

std::string join_ints(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  std::string s;
  for (const auto x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

std::string matrix(const ResultSet& set, const std::string& baseline) {
  std::vector<std::string> kernels, dtypes, masks;
  std::vector<std::int64_t> b, hq, hkv, sq, sk, d, dv;
  std::vector<Problem> problems;
  for (const CaseResult& c : set.cases) {
    const Problem& p = c.problem;
    add_unique(kernels, variant_label(c));
    add_unique(dtypes, std::string(to_string(p.dtype)));
    add_unique(masks, p.mask_label());
    add_unique(b, p.batch);
    add_unique(hq, p.heads_q);
    add_unique(hkv, p.heads_kv);
    add_unique(sq, p.seq_q);
    add_unique(sk, p.seq_kv);
    add_unique(d, p.head_dim);
    add_unique(dv, p.head_dim_v);
    add_unique(problems, p);
  }
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "`" : ", `") + x + "`";
    return s;
  };
  std::string out = "## Configuration matrix\n\n";
  out +=
      fmt::format("{} cases: {} distinct problems x {} kernels (not every kernel takes every problem).\n\n",
                  set.cases.size(), problems.size(), kernels.size());
  out += "| axis | values |\n| --- | --- |\n";
  out += "| kernels | " + list(kernels) + " |\n";
  out += fmt::format("| baseline | {} |\n",
                     baseline.empty() ? std::string("none") : fmt::format("`{}`", baseline));
  out += "| dtype | " + list(dtypes) + " |\n";
  out += "| mask | " + list(masks) + " |\n";
  out += "| batch B | " + join_ints(b) + " |\n";
  out += "| query heads Hq | " + join_ints(hq) + " |\n";
  out += "| key/value heads Hkv | " + join_ints(hkv) + " |\n";
  out += "| query length Sq | " + join_ints(sq) + " |\n";
  out += "| key length Sk | " + join_ints(sk) + " |\n";
  out += "| head dim D | " + join_ints(d) + " |\n";
  out += "| value head dim Dv | " + join_ints(dv) + " |\n\n";
  return out;
}

// Cases of one dtype grouped by problem (first appearance), then by kernel (first appearance).
std::vector<const CaseResult*> ordered(const std::vector<CaseResult>& cases, DType dtype, bool timed) {
  std::vector<Problem> problems;
  std::vector<std::string> kernels;
  std::vector<const CaseResult*> out;
  for (const CaseResult& c : cases) {
    add_unique(problems, c.problem);
    add_unique(kernels, variant_label(c));
    if (c.problem.dtype == dtype && (timed ? median_of(c).has_value() : !measured(c))) out.push_back(&c);
  }
  auto rank = [](const auto& v, const auto& x) { return std::find(v.begin(), v.end(), x) - v.begin(); };
  std::stable_sort(out.begin(), out.end(), [&](const CaseResult* x, const CaseResult* y) {
    const auto px = rank(problems, x->problem), py = rank(problems, y->problem);
    if (px != py) return px < py;
    return rank(kernels, variant_label(*x)) < rank(kernels, variant_label(*y));
  });
  return out;
}

std::string results(const ResultSet& set, const std::string& baseline) {
  std::string out = "## Results\n\n";
  out +=
      "Median and standard deviation of the per-launch time; TFLOPS = flops / median with flops = 2 x B x Hq "
      "x (D + Dv) x visible (query, key) pairs; queries/s = B x Hq x Sq / median.";
  out += baseline.empty()
             ? " No baseline: pass --baseline KERNEL for speedups.\n\n"
             : fmt::format(" Speedup = the `{}` median on the same problem / this median.\n\n", baseline);
  std::vector<DType> dtypes;
  for (const CaseResult& c : set.cases) add_unique(dtypes, c.problem.dtype);
  bool any = false;
  for (const DType dt : dtypes) {
    const auto rows = ordered(set.cases, dt, true);
    if (rows.empty()) continue;
    any = true;
    out += fmt::format("### {}\n\n| kernel | config | median | std | TFLOPS | queries/s |{} correctness |\n",
                       to_string(dt), baseline.empty() ? "" : fmt::format(" speedup vs {} |", baseline));
    out +=
        fmt::format("| --- | --- | ---: | ---: | ---: | ---: |{} --- |\n", baseline.empty() ? "" : " ---: |");
    for (const CaseResult* c : rows) {
      const double m = *median_of(*c);
      std::string speedup;
      if (!baseline.empty()) {
        const auto base = baseline_median(set.cases, baseline, c->problem);
        speedup = fmt::format(" {} |", base ? fmt::format("{:.2f}x", *base / m) : std::string("-"));
      }
      std::string check = "-";
      if (c->correctness)
        check = fmt::format("{:.1e} {}", c->correctness->rel_l2, c->correctness->pass ? "pass" : "**FAIL**");
      out += fmt::format("| {} | {} | {} | {} | {} | {} |{} {} |\n", cell(variant_label(*c)),
                         cell(config_label(c->problem, c->knobs)), format_duration_ms(m),
                         format_duration_ms(c->timing->std_ms), c->tflops ? format_fixed4(*c->tflops) : "-",
                         c->queries_per_s ? si(*c->queries_per_s) : "-", speedup, check);
    }
    out += "\n";
  }
  if (!any) out += "No case was timed.\n\n";
  return out;
}

std::string skipped_failed(const ResultSet& set) {
  std::vector<std::string> kernels, ok_kernels;
  for (const CaseResult& c : set.cases) {
    add_unique(kernels, variant_label(c));
    if (measured(c)) add_unique(ok_kernels, variant_label(c));
  }
  std::string counts;
  for (const Status s : kAllStatuses) {
    const auto n =
        std::count_if(set.cases.begin(), set.cases.end(), [&](const CaseResult& c) { return c.status == s; });
    if (n > 0) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, to_string(s));
  }
  std::string out = "## Skipped and failed cases\n\n";
  out += fmt::format("**{} of {} kernels measured.** {} cases: {}.\n\n", ok_kernels.size(), kernels.size(),
                     set.cases.size(), counts.empty() ? std::string("none") : counts);
  std::vector<std::string> unmeasured;
  for (const auto& k : kernels)
    if (std::find(ok_kernels.begin(), ok_kernels.end(), k) == ok_kernels.end())
      unmeasured.push_back("`" + k + "`");
  if (!unmeasured.empty()) {
    std::string list;
    for (const auto& k : unmeasured) list += (list.empty() ? "" : ", ") + k;
    out += "Not measured on any case: " + list + ".\n\n";
  }
  std::vector<const CaseResult*> rows;
  std::vector<DType> dtypes;
  for (const CaseResult& c : set.cases) add_unique(dtypes, c.problem.dtype);
  for (const DType dt : dtypes)
    for (const CaseResult* c : ordered(set.cases, dt, false)) rows.push_back(c);
  if (rows.empty()) return out + "None: every case ran and passed its check.\n\n";
  out += "| kernel | config | status | reason |\n| --- | --- | --- | --- |\n";
  for (const CaseResult* c : rows)
    out += fmt::format("| {} | {} | {} | {} |\n", cell(variant_label(*c)),
                       cell(config_label(c->problem, c->knobs)), to_string(c->status),
                       c->reason.empty() ? std::string("-") : cell(c->reason));
  return out + "\n";
}

std::string figures(const std::vector<ReportFigure>& figs) {
  std::string out = "## Figures\n\n";
  if (figs.empty()) return out + "No figures were rendered for this report.\n\n";
  for (const ReportFigure& f : figs) {
    out += fmt::format("### {}\n\n![{}]({})\n\n", f.title, f.title, f.path);
    if (!f.caption.empty()) out += f.caption + "\n\n";
  }
  return out;
}

// ---- profiling summary ----------------------------------------------------------------------

std::string json_cell(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) return format_fixed4(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_string()) return cell(shorten(v.get<std::string>(), 60));
  if (v.is_array()) {
    std::string s;
    for (const json& e : v) s += (s.empty() ? "" : "x") + json_cell(e);
    return s;
  }
  return cell(v.dump());
}

bool record_ok(const json& r) { return r.value("status", std::string()) == "ok"; }

double record_flops(const json& r) {
  const auto f = r.find("flops");
  return f != r.end() && f->is_number() ? f->get<double>() : 0;
}

std::string record_config(const json& r) {
  try {
    Problem p;
    from_json(r.at("problem"), p);
    return config_label(p);
  } catch (const std::exception&) {
    return "?";
  }
}

// docs/design.md's order of the launch and metrics fields first, then the others by name.
void order_like_design(std::vector<std::string>& names, const std::vector<std::string>& design) {
  auto rank = [&](const std::string& n) {
    const auto it = std::find(design.begin(), design.end(), n);
    return it == design.end() ? design.size() : static_cast<std::size_t>(it - design.begin());
  };
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    const auto ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : a < b;
  });
}

}  // namespace

std::string profiling_summary_md(const std::vector<json>& records) {
  std::vector<std::string> kernels;
  std::map<std::string, const json*> largest;  // kernel -> its largest ok record with launch stats
  std::map<std::string, std::map<std::string, std::vector<double>>> metrics;  // kernel -> name -> values
  std::map<std::string, std::size_t> ok_count;
  std::vector<std::string> metric_names;
  std::map<std::string, std::pair<int, std::string>> statuses;  // metrics_status -> cases, first reason
  for (const json& r : records) {
    if (!r.is_object() || !record_ok(r)) continue;
    // The variant label (its "variant" field) keeps two variants of a kernel apart.
    const std::string k = r.value("variant", std::string()).empty() ? r.value("kernel", std::string())
                                                                    : r.value("variant", std::string());
    add_unique(kernels, k);
    ++ok_count[k];
    if (const auto l = r.find("launch"); l != r.end() && !l->is_null() && !l->empty()) {
      const json*& best = largest[k];
      if (!best || record_flops(r) > record_flops(*best)) best = &r;
    }
    if (const auto m = r.find("metrics"); m != r.end() && m->is_object()) {
      auto take = [&](const std::string& name, const json& v) {
        if (!v.is_number()) return;
        add_unique(metric_names, name);
        metrics[k][name].push_back(v.get<double>());
      };
      // The case's aggregate: numeric fields and `extra` (--metrics additions); the per-kernel rows
      // and the pass bookkeeping are not metrics of the case.
      for (const auto& [name, v] : m->items()) {
        if (name == "kernels" || name == "passes" || name == "wall_s") continue;
        if (name == "extra" && v.is_object()) {
          for (const auto& [en, ev] : v.items()) take(en, ev);
          continue;
        }
        take(name, v);
      }
    }
    if (const auto st = r.find("metrics_status"); st != r.end() && st->is_string() && *st != "ok") {
      auto& [n, reason] = statuses[st->get<std::string>()];
      ++n;
      if (reason.empty()) reason = r.value("metrics_reason", std::string());
    }
  }
  std::string out = "## Profiling summary\n\n### Launch statistics\n\n";
  if (largest.empty()) {
    out += "Launch statistics: not collected in this run.\n\n";
  } else {
    // Columns: the union of the launch fields, in order of first appearance.
    std::vector<std::string> cols;
    auto objects = [](const json& launch) {
      std::vector<const json*> v;
      if (launch.is_object()) v.push_back(&launch);
      if (launch.is_array())
        for (const json& e : launch)
          if (e.is_object()) v.push_back(&e);
      return v;
    };
    for (const auto& k : kernels)
      if (largest.contains(k))
        for (const json* o : objects(largest[k]->at("launch")))
          for (const auto& [name, v] : o->items()) add_unique(cols, name);
    order_like_design(
        cols, {"name", "grid", "block", "regs", "smem_static", "smem_dynamic", "occupancy_theoretical"});
    out += "Per kernel, at its largest measured case (one row per launched GPU kernel).\n\n| kernel | case |";
    for (const auto& c : cols) out += " " + cell(c) + " |";
    out += "\n| --- | --- |";
    for (std::size_t i = 0; i < cols.size(); ++i) out += " ---: |";
    out += "\n";
    for (const auto& k : kernels) {
      if (!largest.contains(k)) continue;
      for (const json* o : objects(largest[k]->at("launch"))) {
        out += "| " + cell(k) + " | " + record_config(*largest[k]) + " |";
        for (const auto& c : cols)
          out += fmt::format(" {} |", o->contains(c) ? json_cell(o->at(c)) : std::string("-"));
        out += "\n";
      }
    }
    std::string without;
    for (const auto& k : kernels)
      if (!largest.contains(k)) without += (without.empty() ? "`" : ", `") + k + "`";
    if (!without.empty()) out += "\nNot collected for " + without + ".\n";
    out += "\n";
  }
  out += "### Hardware metrics\n\n";
  order_like_design(metric_names,
                    {"sm_throughput_pct", "dram_throughput_pct", "dram_bytes", "l2_throughput_pct",
                     "tensor_pipe_pct", "achieved_occupancy_pct", "tensor_flops"});
  if (metric_names.empty()) {
    out += "Hardware metrics (CUPTI): not collected in this run.";
    for (const auto& [status, info] : statuses)
      out += fmt::format(" {} on {} case{}{}.", status, info.first, info.first == 1 ? "" : "s",
                         info.second.empty() ? std::string() : ": " + one_line(info.second));
    return out + "\n\n";
  }
  out += "Per kernel, the median over its measured cases that carry metrics.\n\n| kernel | cases |";
  for (const auto& m : metric_names) out += " " + cell(m) + " |";
  out += "\n| --- | ---: |";
  for (std::size_t i = 0; i < metric_names.size(); ++i) out += " ---: |";
  out += "\n";
  for (const auto& k : kernels) {
    if (!metrics.contains(k)) continue;
    std::size_t n = 0;
    for (const auto& [name, v] : metrics[k]) n = std::max(n, v.size());
    out += fmt::format("| {} | {} of {} |", cell(k), n, ok_count[k]);
    for (const auto& m : metric_names) {
      auto it = metrics[k].find(m);
      if (it == metrics[k].end()) {
        out += " - |";
        continue;
      }
      std::vector<double> v = it->second;
      std::sort(v.begin(), v.end());
      const double med = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
      out += " " + si(med) + " |";
    }
    out += "\n";
  }
  return out + "\n";
}

std::vector<std::string> report_observations(const std::vector<CaseResult>& cases, const RunInfo& run,
                                             const std::string& baseline, double near_ceiling) {
  std::vector<std::string> out;
  // 1. The fastest kernel per regime, counted over problems where at least two kernels were measured.
  std::vector<std::string> regimes;
  for (const CaseResult& c : cases)
    if (measured(c)) add_unique(regimes, regime_of(c.problem));
  for (const std::string& regime : regimes) {
    std::vector<Problem> problems;
    for (const CaseResult& c : cases)
      if (measured(c) && regime_of(c.problem) == regime) add_unique(problems, c.problem);
    std::map<std::string, int> wins;
    std::vector<std::string> order;
    int contested = 0;
    const CaseResult* top = nullptr;  // the highest TFLOPS of the regime
    for (const Problem& p : problems) {
      const CaseResult* best = nullptr;
      std::set<std::string> kernels;
      for (const CaseResult& c : cases) {
        if (!measured(c) || !(c.problem == p)) continue;
        kernels.insert(variant_label(c));
        if (!best || *median_of(c) < *median_of(*best)) best = &c;
        if (c.tflops && (!top || *c.tflops > *top->tflops)) top = &c;
      }
      if (kernels.size() < 2) continue;
      ++contested;
      add_unique(order, variant_label(*best));
      ++wins[variant_label(*best)];
    }
    if (contested == 0) continue;
    std::stable_sort(order.begin(), order.end(),
                     [&](const auto& a, const auto& b) { return wins[a] > wins[b]; });
    std::string tally;
    for (const auto& k : order) tally += fmt::format("{}`{}` {}", tally.empty() ? "" : ", ", k, wins[k]);
    std::string line = fmt::format(
        "{}: fastest on {} of {} problems with two or more measured kernels: `{}` "
        "({}).",
        regime, wins[order.front()], contested, order.front(), tally);
    if (top)
      line += fmt::format(" Highest throughput: `{}` {} TFLOPS at {}.", variant_label(*top),
                          format_fixed4(*top->tflops), config_label(top->problem, top->knobs));
    out.push_back(line);
  }
  // 2. Where each kernel's speedup over the baseline peaks (and where it is lowest).
  if (!baseline.empty()) {
    std::vector<std::string> kernels;
    for (const CaseResult& c : cases)
      if (measured(c) && variant_label(c) != baseline) add_unique(kernels, variant_label(c));
    for (const std::string& k : kernels) {
      const CaseResult *hi = nullptr, *lo = nullptr;
      double s_hi = 0, s_lo = 0;
      int n = 0;
      for (const CaseResult& c : cases) {
        if (variant_label(c) != k || !measured(c)) continue;
        const auto base = baseline_median(cases, baseline, c.problem);
        if (!base) continue;
        const double s = *base / *median_of(c);
        ++n;
        if (!hi || s > s_hi) hi = &c, s_hi = s;
        if (!lo || s < s_lo) lo = &c, s_lo = s;
      }
      if (n == 0) continue;
      out.push_back(
          fmt::format("`{}` vs `{}`: speedup peaks at {:.2f}x on {}; lowest {:.2f}x on {} ({} problem{}).", k,
                      baseline, s_hi, config_label(hi->problem, hi->knobs), s_lo,
                      config_label(lo->problem, lo->knobs), n, n == 1 ? "" : "s"));
    }
  }
  // 3. Cases near a roofline ceiling.
  const auto tensor =
      run.peaks.tensor_tflops_measured ? run.peaks.tensor_tflops_measured : run.peaks.tensor_tflops_datasheet;
  const auto dram =
      run.peaks.dram_gbps_measured ? run.peaks.dram_gbps_measured : run.peaks.dram_gbps_datasheet;
  const char* tensor_kind = run.peaks.tensor_tflops_measured ? "measured" : "datasheet";
  const char* dram_kind = run.peaks.dram_gbps_measured ? "measured" : "datasheet";
  if (!tensor && !dram) {
    out.push_back(
        "Roofline: no ceilings were recorded for this run (no measured or datasheet peaks), so "
        "nearness to a ceiling is not judged.");
    return out;
  }
  struct Near {
    const CaseResult* c;
    double frac;
    const char* what;
  };
  std::vector<Near> near;
  double best_frac = 0;
  const CaseResult* best = nullptr;
  for (const CaseResult& c : cases) {
    if (!measured(c)) continue;
    if (tensor && c.tflops) {
      const double f = *c.tflops / *tensor;
      if (f >= near_ceiling) near.push_back({&c, f, "tensor"});
      if (f > best_frac) best_frac = f, best = &c;
    }
    if (dram && c.gbps) {
      const double f = *c.gbps / *dram;
      if (f >= near_ceiling) near.push_back({&c, f, "memory"});
    }
  }
  if (near.empty()) {
    std::string line =
        fmt::format("Roofline: no case reaches {:.0f}% of a ceiling (tensor {} TFLOPS {}", near_ceiling * 100,
                    tensor ? format_fixed4(*tensor) : std::string("-"), tensor_kind);
    line += fmt::format(", memory {} GB/s {})", dram ? format_fixed4(*dram) : std::string("-"), dram_kind);
    if (best)
      line += fmt::format("; the closest is `{}` at {:.0f}% of the tensor ceiling on {}.",
                          variant_label(*best), best_frac * 100, config_label(best->problem, best->knobs));
    else
      line += ".";
    out.push_back(line);
  } else {
    std::sort(near.begin(), near.end(), [](const Near& a, const Near& b) { return a.frac > b.frac; });
    std::string list;
    for (std::size_t i = 0; i < near.size() && i < 3; ++i)
      list +=
          fmt::format("{}`{}` {} at {:.0f}% of the {} ceiling", i ? "; " : "", variant_label(*near[i].c),
                      config_label(near[i].c->problem, near[i].c->knobs), near[i].frac * 100, near[i].what);
    out.push_back(
        fmt::format("Roofline: {} case{} at >= {:.0f}% of a ceiling (tensor {} TFLOPS {}, memory {} GB/s "
                    "{}): {}.",
                    near.size(), near.size() == 1 ? "" : "s", near_ceiling * 100,
                    tensor ? format_fixed4(*tensor) : std::string("-"), tensor_kind,
                    dram ? format_fixed4(*dram) : std::string("-"), dram_kind, list));
  }
  return out;
}

std::string single_case_command(const CaseResult& c, const Protocol& p, const std::string& attnscope,
                                bool for_ncu) {
  const Problem& q = c.problem;
  std::string cmd = fmt::format("{} run --backend cuda --kernels {} --batch {} --heads {}", attnscope,
                                variant_label(c), q.batch, q.heads_q);
  if (q.heads_kv != q.heads_q) cmd += fmt::format(" --heads-kv {}", q.heads_kv);
  if (q.seq_kv == q.seq_q)
    cmd += fmt::format(" --seq {}", q.seq_q);
  else
    cmd += fmt::format(" --seq-q {} --seq-kv {}", q.seq_q, q.seq_kv);
  cmd += fmt::format(" --head-dim {}", q.head_dim);
  if (q.head_dim_v != q.head_dim) cmd += fmt::format(" --head-dim-v {}", q.head_dim_v);
  cmd += fmt::format(" --dtype {} --causal {}", to_string(q.dtype), q.causal ? 1 : 0);
  if (q.window.active()) cmd += fmt::format(" --window '{},{}'", q.window.left, q.window.right);
  if (for_ncu) {
    // One warm-up launch and one sample, nothing else on the GPU: the profile holds this kernel only.
    cmd +=
        fmt::format(" --no-check --warmup-ms 0 --min-samples 1 --max-samples 1 --l2 warm --seed {}", p.seed);
    cmd += fmt::format(" --out runs/ncu-{} --force", c.case_id);
    return fmt::format("ncu --set full --nvtx --nvtx-include 'regex:attnscope@.*/' -o ncu-{}-{} {}",
                       variant_label(c), c.case_id, cmd);
  }
  cmd += fmt::format(
      " --warmup-ms {} --min-samples {} --max-samples {} --max-time-s {} --noise {} --l2 {} --seed {}",
      format_fixed4(p.warmup_ms), p.min_samples, p.max_samples, format_fixed4(p.max_time_s),
      format_fixed4(p.noise_pct), to_string(p.l2), p.seed);
  if (p.graphs) cmd += fmt::format(" --graphs --graph-batch {}", p.graph_batch);
  if (!p.check) cmd += " --no-check";
  return cmd + fmt::format(" --out runs/repro-{}", c.case_id);
}

namespace {

std::string reproducibility(const ResultSet& set, const ReportOptions& o) {
  std::string out = "## Reproducibility\n\n";
  for (const ResultSource& s : set.sources) {
    out += fmt::format(
        "`{}` was written by:\n\n```sh\n{}\n```\n\n", display_name(s.file),
        s.run.command_line.empty() ? std::string("# (no command line recorded)") : s.run.command_line);
  }
  if (!o.report_command.empty()) out += fmt::format("This report:\n\n```sh\n{}\n```\n\n", o.report_command);
  // Per attnscope kernel, its largest measured case: a re-run and an Nsight Compute profile.
  // Records of other tools (tools/torch_sdpa.py) are reproduced with their own command above.
  std::vector<std::string> kernels;
  std::map<std::string, const CaseResult*> largest;
  std::map<std::string, const Protocol*> protocol_of;
  std::size_t offset = 0;
  for (const ResultSource& s : set.sources) {
    const bool ours = s.run.command_line.find("torch_sdpa.py") == std::string::npos;
    for (std::size_t i = offset; i < offset + s.cases; ++i) {
      const CaseResult& c = set.cases[i];
      if (!ours || !measured(c) || s.run.backend != "cuda") continue;
      add_unique(kernels, variant_label(c));
      const CaseResult*& best = largest[variant_label(c)];
      if (!best || c.flops > best->flops) best = &c, protocol_of[variant_label(c)] = &s.run.protocol;
    }
    offset += s.cases;
  }
  if (kernels.empty()) return out;
  out +=
      "One case per attnscope kernel (its largest measured case), re-measured alone and profiled with Nsight "
      "Compute (every GPU kernel inside attnscope's NVTX ranges, full section set):\n\n```sh\n";
  for (const auto& k : kernels) {
    out += single_case_command(*largest[k], *protocol_of[k], o.attnscope, false) + "\n";
    // The record's own ncu command (the metrics pass writes it) selects exactly its NVTX range.
    out += (largest[k]->ncu_command.empty()
                ? single_case_command(*largest[k], *protocol_of[k], o.attnscope, true)
                : largest[k]->ncu_command) +
           "\n";
  }
  return out + "```\n";
}

}  // namespace

std::string markdown_report(const ResultSet& set, const ReportOptions& options) {
  const RunInfo& run = set.primary();
  const std::string baseline = options.baseline.empty() ? run.baseline : options.baseline;
  std::vector<std::string> kernels, ok_kernels;
  for (const CaseResult& c : set.cases) {
    add_unique(kernels, variant_label(c));
    if (measured(c)) add_unique(ok_kernels, variant_label(c));
  }
  std::string out =
      fmt::format("# attnscope report: {}\n\n", run.run_id.empty() ? std::string("run") : run.run_id);
  out +=
      fmt::format("{} cases of {} kernels on {}, started {}; {} of {} kernels measured.\n\n",
                  set.cases.size(), kernels.size(), run.gpu ? run.gpu->name : std::string("the CPU backend"),
                  run.started_at.empty() ? std::string("(time not recorded)") : run.started_at,
                  ok_kernels.size(), kernels.size());
  if (!set.warnings.empty()) {
    out += "Warnings while reading the results:\n\n";
    for (const auto& w : set.warnings) out += "- " + one_line(w) + "\n";
    out += "\n";
  }
  out += environment(set);
  out += protocol(set);
  out += matrix(set, baseline);
  out += results(set, baseline);
  out += skipped_failed(set);
  std::vector<json> records;
  records.reserve(set.cases.size());
  for (const CaseResult& c : set.cases) records.push_back(to_json(c));
  out += profiling_summary_md(records);
  out += figures(options.figures);
  out += "## Observations\n\nComputed from the data above (rules in docs/reports.md).\n\n";
  const auto obs = report_observations(set.cases, run, baseline, options.near_ceiling);
  if (obs.empty()) out += "- No kernel was measured, so there is nothing to observe.\n";
  for (const auto& line : obs) out += "- " + line + "\n";
  out += "\n";
  out += reproducibility(set, options);
  return out;
}

}  // namespace attn
