// The metrics model (see metrics.hpp): names, request syntax, aggregation, reasons, ncu command.
#include "profiling/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <span>

#include "kernels/api/plugin_loader.hpp"
#include "profiling/sweep/axis_parse.hpp"
#include "profiling/sweep/command_line.hpp"
#include "profiling/sweep/varlen_axis.hpp"

namespace attn {

namespace {

std::vector<std::string> cupti_names_of(std::string_view field) {
  const FieldDesc* f = find_field(field);
  return f ? std::vector<std::string>(f->cupti.begin(), f->cupti.end()) : std::vector<std::string>{};
}

}  // namespace

const std::vector<std::string>& tensor_flop_metrics() {
  static const std::vector<std::string> names = cupti_names_of("tensor_flops");
  return names;
}

const std::vector<std::string>& tensor_peak_pct_metrics() {
  static const std::vector<std::string> names = cupti_names_of("tensor_pct_of_peak");
  return names;
}

// The CUPTI names of the catalogue's metrics.* rows, in row order, each once.
const std::vector<std::string>& default_metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const FieldDesc& f : case_fields())
      for (const char* name : f.cupti)
        if (std::find(n.begin(), n.end(), name) == n.end()) n.emplace_back(name);
    return n;
  }();
  return names;
}

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = s.find(sep, start);
    parts.emplace_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

bool is_word(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::string metric_name_problem(std::string_view name) {
  if (name.empty()) return "empty metric name";
  if (std::any_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
    return "metric names are lower case (they are case-sensitive)";
  const std::vector<std::string> parts = split(name, '.');
  const std::string& base = parts.front();
  if (!is_word(base) || base.find("__") == std::string::npos || base.find("__") == 0)
    return "'" + base + "' is not a metric base name (unit__name, e.g. dram__bytes_read)";
  if (parts.size() == 1)
    return "a rollup is missing: counters need .sum, .avg, .min or .max (e.g. " + base +
           ".sum); ratios need .ratio, .pct or .max_rate";
  const std::string& rollup = parts[1];
  const bool counter_rollup = rollup == "sum" || rollup == "avg" || rollup == "min" || rollup == "max";
  const bool ratio_rollup = rollup == "ratio" || rollup == "pct" || rollup == "max_rate";
  if (!counter_rollup && !ratio_rollup)
    return "'" + rollup + "' is not a rollup (sum, avg, min, max; ratio, pct, max_rate for ratios)";
  if (ratio_rollup && parts.size() > 2) return "a ." + rollup + " metric takes no submetric";
  if (parts.size() > 4) return "too many parts: expected base.rollup[.submetric]";
  for (std::size_t i = 2; i < parts.size(); ++i)
    if (!is_word(parts[i]))
      return "'" + parts[i] + "' is not a submetric (e.g. pct_of_peak_sustained_elapsed)";
  return {};
}

bool parse_metrics_request(std::string_view text_in, MetricsRequest& out, std::string& problem) {
  const std::string text = trim(text_in);
  MetricsRequest r;
  if (text.empty() || text == "default") {
    r.names = default_metric_names();
    out = r;
    return true;
  }
  if (text == "none") {
    r.enabled = false;
    out = r;
    return true;
  }
  const bool add = text.front() == '+';
  const std::vector<std::string> items = split(std::string_view(text).substr(add ? 1 : 0), ',');
  if (add) r.names = default_metric_names();
  for (const std::string& raw : items) {
    const std::string name = trim(raw);
    if (name.empty()) {
      problem = "empty metric name in the list";
      return false;
    }
    if (name == "default" || name == "none") {
      problem = "'" + name + "' stands alone; it cannot be part of a list";
      return false;
    }
    if (const std::string why = metric_name_problem(name); !why.empty()) {
      problem = "'" + name + "': " + why;
      return false;
    }
    if (!contains(r.names, name)) r.names.push_back(name);
    if (!contains(default_metric_names(), name) && !contains(r.extra, name)) r.extra.push_back(name);
  }
  out = r;
  return true;
}

KernelMetrics kernel_metrics_from(const std::string& kernel_name, const std::map<std::string, double>& raw,
                                  const std::vector<std::string>& extra) {
  auto get = [&](const std::string& name) -> std::optional<double> {
    const auto it = raw.find(name);
    if (it == raw.end() || !std::isfinite(it->second)) return std::nullopt;
    return it->second;
  };
  // A sum over several metrics, present only when all of them are.
  auto sum_of = [&](std::span<const char* const> names) -> std::optional<double> {
    double s = 0;
    for (const char* n : names) {
      const auto v = get(n);
      if (!v) return std::nullopt;
      s += *v;
    }
    return s;
  };
  KernelMetrics k;
  k.name = kernel_name;
  for (const FieldDesc& f : case_fields())
    if (f.metric) k.*f.metric = sum_of(f.cupti);
  for (const auto& name : extra)
    if (const auto v = get(name)) k.extra[name] = *v;
  return k;
}

Rollup rollup_of(std::string_view name) {
  const std::vector<std::string> parts = split(name, '.');
  if (parts.size() == 2) {
    if (parts[1] == "sum") return Rollup::sum;
    if (parts[1] == "max") return Rollup::max;
    if (parts[1] == "min") return Rollup::min;
  }
  return Rollup::time_weighted_mean;
}

KernelMetrics aggregate_metrics(const std::vector<KernelMetrics>& kernels) {
  KernelMetrics a;
  if (kernels.empty()) return a;
  bool all_timed = true;
  for (const auto& k : kernels) all_timed = all_timed && k.gpu_time_ns && *k.gpu_time_ns > 0;
  auto weight = [&](const KernelMetrics& k) { return all_timed ? *k.gpu_time_ns : 1.0; };

  auto combine = [&](auto field, Rollup how) -> std::optional<double> {
    double acc = how == Rollup::max ? -INFINITY : how == Rollup::min ? INFINITY : 0.0;
    double wsum = 0;
    for (const auto& k : kernels) {
      const std::optional<double> v = k.*field;
      if (!v) return std::nullopt;
      switch (how) {
        case Rollup::sum:
          acc += *v;
          break;
        case Rollup::max:
          acc = std::max(acc, *v);
          break;
        case Rollup::min:
          acc = std::min(acc, *v);
          break;
        case Rollup::time_weighted_mean:
          acc += *v * weight(k);
          wsum += weight(k);
          break;
      }
    }
    return how == Rollup::time_weighted_mean ? acc / wsum : acc;
  };
  for (const FieldDesc& f : case_fields())
    if (f.metric) a.*f.metric = combine(f.metric, f.rollup);

  // Extra metrics: by their rollup, present only where every kernel has them.
  for (const auto& [name, first] : kernels.front().extra) {
    const Rollup how = rollup_of(name);
    double acc = how == Rollup::time_weighted_mean ? 0.0 : first;
    double wsum = 0;
    bool all = true;
    for (std::size_t i = 0; i < kernels.size() && all; ++i) {
      const auto it = kernels[i].extra.find(name);
      if (it == kernels[i].extra.end()) {
        all = false;
        break;
      }
      const double v = it->second;
      switch (how) {
        case Rollup::sum:
          acc = i == 0 ? v : acc + v;
          break;
        case Rollup::max:
          acc = std::max(acc, v);
          break;
        case Rollup::min:
          acc = std::min(acc, v);
          break;
        case Rollup::time_weighted_mean:
          acc += v * weight(kernels[i]);
          wsum += weight(kernels[i]);
          break;
      }
    }
    if (all) a.extra[name] = how == Rollup::time_weighted_mean ? acc / wsum : acc;
  }
  return a;
}

#if !ATTNSCOPE_HAS_CUDA
std::string metric_catalogue_problem(const std::vector<std::string>&) { return {}; }
#endif

std::string cupti_unavailable_reason(int code, std::string_view call, std::string_view cupti_message) {
  const std::string what = fmt::format("{} returned CUPTI error {}{}{}", call, code,
                                       cupti_message.empty() ? "" : ": ", cupti_message);
  switch (code) {
    case 35:  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
      return "GPU performance counters are restricted to admin users (" + what +
             "). Fix: run as root or with CAP_SYS_ADMIN (CAP_PERFMON from driver R565 on), or set "
             "`options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d, rebuild the "
             "initramfs "
             "and reboot; in a container, allow it on the host or start it with --cap-add=SYS_ADMIN "
             "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
    case 15:  // CUPTI_ERROR_NOT_INITIALIZED: libnvperf_host.so did not load
      return "CUPTI could not load libnvperf_host.so (" + what +
             "). Fix: add the CUDA toolkit's lib64 (e.g. /usr/local/cuda/lib64) to LD_LIBRARY_PATH";
    case 26:  // CUPTI_ERROR_HARDWARE_BUSY
    case 39:  // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
      return "another profiler holds the GPU's counters (" + what +
             "). Fix: run attnscope outside ncu/nsys/DCGM profiling, or profile one case with its "
             "recorded ncu_command";
    case 40:
      return "vGPU profiling is not enabled (" + what + "). Fix: enable profiling for the vGPU on the host";
    case 41:
      return "confidential compute mode blocks counters (" + what + "). Fix: none while CC is on";
    case 42:
      return "this GPU (CMP) has no profiling support (" + what + ")";
    case 43:
      return "MIG instances cannot be profiled with the range profiler (" + what +
             "). Fix: run on a GPU with MIG disabled";
    case 44:
      return "SLI is enabled (" + what + "). Fix: disable SLI";
    case 45:
      return "profiling under WSL is not supported by this driver (" + what + ")";
    case 46:
      return "CUPTI does not know this GPU's chip (" + what + "). Fix: a newer CUDA toolkit";
    default:
      return what;
  }
}

std::string injected_profiler(const char* injection, const char* nsys) {
  if (nsys && *nsys) return "Nsight Systems";
  if (!injection || !*injection) return {};
  const std::string path = injection;
  auto has = [&](const char* s) { return path.find(s) != std::string::npos; };
  if (has("nsight-compute") || has("TreeLauncher") || has("/ncu")) return "Nsight Compute";
  if (has("nsight-systems") || has("nsys") || has("ToolsInjection")) return "Nsight Systems";
  return "a CUDA tool injected through CUDA_INJECTION64_PATH=" + path;
}

std::string injected_profiler() {
  std::string tool =
      injected_profiler(std::getenv("CUDA_INJECTION64_PATH"), std::getenv("NSYS_PROFILING_SESSION_ID"));
  // Nsight Compute 2025 injects through its own transport; these variables were set in the
  // profiled process (and its worker children) on the H100, CUDA_INJECTION64_PATH was not.
  if (tool.empty() &&
      (std::getenv("NV_NSIGHT_INJECTION_TRANSPORT_TYPE") || std::getenv("NV_NSIGHT_INJECTION_PORT_BASE")))
    tool = "an Nsight tool (NV_NSIGHT_INJECTION_TRANSPORT_TYPE is set; Nsight Compute)";
  if (tool.empty()) {
    // Nsight tools may also come in through LD_PRELOAD (their interceptor libraries).
    const char* preload = std::getenv("LD_PRELOAD");
    if (preload && (std::strstr(preload, "nsight-compute") || std::strstr(preload, "InterceptorInjection")))
      tool = "Nsight Compute";
    else if (preload && (std::strstr(preload, "nsight-systems") || std::strstr(preload, "nsys")))
      tool = "Nsight Systems";
  }
  return tool;
}

std::string escape_nvtx_filter(std::string_view name) {
  std::string out;
  out.reserve(name.size() * 2);
  for (char c : name) {
    if (c == '@' || c == ',' || c == '[' || c == ']' || c == '/' || c == '*' || c == '+' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

std::string ncu_command_for(const std::string& attnscope_exe, const std::string& kernel, const Problem& p,
                            const Protocol& protocol, const std::vector<std::string>& metric_names,
                            const std::string& nvtx_range) {
  std::string names;
  for (const auto& n : metric_names) names += (names.empty() ? "" : ",") + n;
  std::string filter(kNvtxDomain);
  filter += '@';
  filter += escape_nvtx_filter(nvtx_range);
  filter += '/';
  filter += kNvtxMetricsRange;
  filter += ']';
  const std::string window =
      p.window.active() ? fmt::format("{},{}", p.window.left, p.window.right) : std::string("none");
  // The one case alone, in the run's protocol, timed briefly: ncu replays the kernel anyway.
  SweepOverrides o;
  o.backend = "cuda";
  o.kernels = kernel;
  o.batch = std::to_string(p.batch);
  o.heads = std::to_string(p.heads_q);
  o.heads_kv = std::to_string(p.heads_kv);
  o.seq_q = std::to_string(p.seq_q);
  o.seq_kv = std::to_string(p.seq_kv);
  o.head_dim = std::to_string(p.head_dim);
  o.head_dim_v = std::to_string(p.head_dim_v);
  o.dtype = std::string(to_string(p.dtype));
  o.causal = p.causal ? "1" : "0";
  o.window = window;
  if (p.compress.active()) o.compress = fmt::format("{},{}", p.compress.block, p.compress.stride);
  if (p.select.active()) o.select = select_text(p.select);
  if (p.varlen.active()) o.varlen = varlen_list_text(p);             // the case's own lengths
  if (p.pass != Pass::fwd) o.pass = std::string(to_string(p.pass));  // its NVTX range names the pass
  o.l2 = std::string(to_string(protocol.l2));
  o.seed = std::to_string(protocol.seed);
  o.max_time_s = "0.05";
  o.out = "/tmp/attnscope-ncu";
  o.force = "1";
  std::vector<std::string> argv{attnscope_exe, "run"};
  for (std::string& a : sweep_args(o, FlagStyle::joined)) argv.push_back(std::move(a));
  argv.emplace_back("--quiet");
  // A plug-in's or kernel source's kernel exists only once its file is loaded.
  const std::string id = kernel.substr(0, kernel.find('@'));
  if (const PluginInfo* lib = plugin_of(id)) {
    argv.emplace_back(lib->kind == "source" ? "--kernel-source" : "--plugin");
    argv.push_back(lib->path);
  }
  return fmt::format("ncu --nvtx --nvtx-include {} --clock-control none --cache-control none --metrics {} {}",
                     shell_quote(filter), names, join_command_line(argv));
}

}  // namespace attn
