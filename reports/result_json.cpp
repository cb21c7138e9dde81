// attnscope.result.v1 <-> JSON: field names as docs/design.md "Result records", nullopt omitted,
// non-finite doubles as strings, strict types with the field path in every error.
#include "reports/result_json.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "profiling/sweep/variant.hpp"

namespace attn {

using nlohmann::json;

namespace {

// ---- writing --------------------------------------------------------------------------------

json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

void put_opt(json& j, const char* key, const std::optional<double>& v) {
  if (v) j[key] = number(*v);
}

void put_opt(json& j, const char* key, const std::optional<std::int64_t>& v) {
  if (v) j[key] = *v;
}

// ---- reading --------------------------------------------------------------------------------

[[noreturn]] void fail(const std::string& path, std::string_view what) {
  throw ResultsFormatError(path + ": " + std::string(what));
}

std::string child(const std::string& path, std::string_view key) { return path + "." + std::string(key); }

std::string type_of(const json& v) { return v.type_name(); }

// The member `key` of object `obj`, or nullptr when absent or null.
const json* find(const json& obj, std::string_view key) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

const json& require_object(const json& v, const std::string& path) {
  if (!v.is_object()) fail(path, "expected an object, got " + type_of(v));
  return v;
}

double as_double(const json& v, const std::string& path) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    fail(path, "expected a number or \"nan\"/\"inf\"/\"-inf\", got \"" + s + "\"");
  }
  fail(path, "expected a number, got " + type_of(v));
}

std::int64_t as_int64(const json& v, const std::string& path) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<std::int64_t>();
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(path, "integer " + std::to_string(u) + " does not fit in int64");
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_float()) {
    // Other tools may write 4096.0; accept integral values only, and only where exact.
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<std::int64_t>(d);
    fail(path, "expected an integer, got " + v.dump());
  }
  fail(path, "expected an integer, got " + type_of(v));
}

int as_int(const json& v, const std::string& path) {
  const std::int64_t x = as_int64(v, path);
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max())
    fail(path, "integer " + std::to_string(x) + " is out of range");
  return static_cast<int>(x);
}

bool as_bool(const json& v, const std::string& path) {
  if (!v.is_boolean()) fail(path, "expected true or false, got " + type_of(v));
  return v.get<bool>();
}

std::string as_string(const json& v, const std::string& path) {
  if (!v.is_string()) fail(path, "expected a string, got " + type_of(v));
  return v.get<std::string>();
}

// Field readers: `get_*` keep `out` when the key is absent; `req_*` throw; `opt_*` return nullopt.
void get_double(const json& obj, std::string_view key, const std::string& path, double& out) {
  if (const json* v = find(obj, key)) out = as_double(*v, child(path, key));
}
void get_int(const json& obj, std::string_view key, const std::string& path, int& out) {
  if (const json* v = find(obj, key)) out = as_int(*v, child(path, key));
}
void get_int64(const json& obj, std::string_view key, const std::string& path, std::int64_t& out) {
  if (const json* v = find(obj, key)) out = as_int64(*v, child(path, key));
}
void get_bool(const json& obj, std::string_view key, const std::string& path, bool& out) {
  if (const json* v = find(obj, key)) out = as_bool(*v, child(path, key));
}
void get_string(const json& obj, std::string_view key, const std::string& path, std::string& out) {
  if (const json* v = find(obj, key)) out = as_string(*v, child(path, key));
}

const json& req(const json& obj, std::string_view key, const std::string& path) {
  const json* v = find(obj, key);
  if (v == nullptr) fail(child(path, key), "required field is missing");
  return *v;
}

std::optional<double> opt_double(const json& obj, std::string_view key, const std::string& path) {
  if (const json* v = find(obj, key)) return as_double(*v, child(path, key));
  return std::nullopt;
}
std::optional<std::int64_t> opt_int64(const json& obj, std::string_view key, const std::string& path) {
  if (const json* v = find(obj, key)) return as_int64(*v, child(path, key));
  return std::nullopt;
}

void check_record(const json& j, std::string_view want) {
  const std::string kind = record_kind(j);
  if (kind != want) fail("record", "expected a \"" + std::string(want) + "\" record, got \"" + kind + "\"");
}

// ---- sub-objects ----------------------------------------------------------------------------

// NVML clock-event reason bits, named as nvml.h does (nvmlClocksEventReason*).
constexpr std::pair<std::uint64_t, const char*> kThrottleNames[] = {
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
};

json clocks_json(const Clocks& c) {
  json j = json::object();
  put_opt(j, "sm_mhz", c.sm_mhz);
  put_opt(j, "mem_mhz", c.mem_mhz);
  put_opt(j, "temp_c", c.temp_c);
  put_opt(j, "power_w", c.power_w);
  put_opt(j, "sm_mhz_min", c.sm_mhz_min);
  if (c.clocks_dropped) j["clocks_dropped"] = *c.clocks_dropped;
  if (c.throttle_mask) {
    j["throttle_mask"] = *c.throttle_mask;
    json names = json::array();  // derived from the mask, for readers; not read back
    for (const auto& [bit, name] : kThrottleNames)
      if (*c.throttle_mask & bit) names.push_back(name);
    j["throttle_reasons"] = std::move(names);
  }
  return j;
}

bool clocks_empty(const Clocks& c) {
  return !c.sm_mhz && !c.mem_mhz && !c.temp_c && !c.power_w && !c.sm_mhz_min && !c.clocks_dropped &&
         !c.throttle_mask;
}

Clocks clocks_from(const json& j, const std::string& path) {
  require_object(j, path);
  Clocks c;
  c.sm_mhz = opt_double(j, "sm_mhz", path);
  c.mem_mhz = opt_double(j, "mem_mhz", path);
  c.temp_c = opt_double(j, "temp_c", path);
  c.power_w = opt_double(j, "power_w", path);
  c.sm_mhz_min = opt_double(j, "sm_mhz_min", path);
  if (const json* d = find(j, "clocks_dropped"))
    c.clocks_dropped = as_bool(*d, child(path, "clocks_dropped"));
  if (const json* m = find(j, "throttle_mask")) {
    const std::int64_t v = as_int64(*m, child(path, "throttle_mask"));
    if (v < 0) fail(child(path, "throttle_mask"), "expected a non-negative bitmask");
    c.throttle_mask = static_cast<std::uint64_t>(v);
  }
  return c;
}

// ---- launch statistics, metrics, roofline ----------------------------------------------------

json launch_json(const LaunchStats& l) {
  json j = {{"name", l.name},
            {"grid", json::array({l.grid[0], l.grid[1], l.grid[2]})},
            {"block", json::array({l.block[0], l.block[1], l.block[2]})},
            {"regs", l.regs},
            {"smem_static", l.smem_static},
            {"smem_dynamic", l.smem_dynamic},
            {"local_bytes", l.local_bytes}};
  put_opt(j, "smem_config", l.smem_config);
  put_opt(j, "occupancy_theoretical", l.occupancy_theoretical);
  return j;
}

std::array<std::int64_t, 3> dim3_from(const json& j, const std::string& path) {
  if (!j.is_array() || j.size() != 3) fail(path, "expected [x, y, z], got " + j.dump());
  return {as_int64(j[0], path + "[0]"), as_int64(j[1], path + "[1]"), as_int64(j[2], path + "[2]")};
}

LaunchStats launch_from(const json& j, const std::string& path) {
  require_object(j, path);
  LaunchStats l;
  get_string(j, "name", path, l.name);
  if (const json* g = find(j, "grid")) l.grid = dim3_from(*g, child(path, "grid"));
  if (const json* b = find(j, "block")) l.block = dim3_from(*b, child(path, "block"));
  get_int(j, "regs", path, l.regs);
  get_int64(j, "smem_static", path, l.smem_static);
  get_int64(j, "smem_dynamic", path, l.smem_dynamic);
  get_int64(j, "local_bytes", path, l.local_bytes);
  l.smem_config = opt_int64(j, "smem_config", path);
  l.occupancy_theoretical = opt_double(j, "occupancy_theoretical", path);
  return l;
}

// The named fields of KernelMetrics, in record order.
constexpr std::pair<const char*, std::optional<double> KernelMetrics::*> kMetricFields[] = {
    {"sm_throughput_pct", &KernelMetrics::sm_throughput_pct},
    {"dram_throughput_pct", &KernelMetrics::dram_throughput_pct},
    {"dram_bytes", &KernelMetrics::dram_bytes},
    {"dram_bytes_read", &KernelMetrics::dram_bytes_read},
    {"dram_bytes_write", &KernelMetrics::dram_bytes_write},
    {"l2_throughput_pct", &KernelMetrics::l2_throughput_pct},
    {"tensor_pipe_pct", &KernelMetrics::tensor_pipe_pct},
    {"achieved_occupancy_pct", &KernelMetrics::achieved_occupancy_pct},
    {"tensor_flops", &KernelMetrics::tensor_flops},
    {"tensor_pct_of_peak", &KernelMetrics::tensor_pct_of_peak},
    {"gpu_time_ns", &KernelMetrics::gpu_time_ns},
};

void put_kernel_metrics(json& j, const KernelMetrics& k) {
  for (const auto& [key, field] : kMetricFields) put_opt(j, key, k.*field);
  if (!k.extra.empty()) {
    json extra = json::object();
    for (const auto& [name, v] : k.extra) extra[name] = number(v);
    j["extra"] = std::move(extra);
  }
}

void get_kernel_metrics(const json& j, const std::string& path, KernelMetrics& k) {
  require_object(j, path);
  for (const auto& [key, field] : kMetricFields) k.*field = opt_double(j, key, path);
  if (const json* e = find(j, "extra")) {
    const std::string epath = child(path, "extra");
    require_object(*e, epath);
    for (const auto& [name, v] : e->items()) k.extra[name] = as_double(v, child(epath, name));
  }
}

json metrics_json(const CaseMetrics& m) {
  json j = json::object();
  put_kernel_metrics(j, m.aggregate);
  json kernels = json::array();
  for (const auto& k : m.kernels) {
    json row = {{"name", k.name}};
    put_kernel_metrics(row, k);
    kernels.push_back(std::move(row));
  }
  j["kernels"] = std::move(kernels);
  j["passes"] = m.passes;
  j["wall_s"] = number(m.wall_s);
  return j;
}

CaseMetrics metrics_from(const json& j, const std::string& path) {
  CaseMetrics m;
  get_kernel_metrics(j, path, m.aggregate);
  if (const json* ks = find(j, "kernels")) {
    const std::string kpath = child(path, "kernels");
    if (!ks->is_array()) fail(kpath, "expected an array, got " + type_of(*ks));
    for (std::size_t i = 0; i < ks->size(); ++i) {
      const std::string rpath = kpath + "[" + std::to_string(i) + "]";
      KernelMetrics k;
      get_kernel_metrics((*ks)[i], rpath, k);
      get_string((*ks)[i], "name", rpath, k.name);
      m.kernels.push_back(std::move(k));
    }
  }
  get_int(j, "passes", path, m.passes);
  get_double(j, "wall_s", path, m.wall_s);
  return m;
}

json roofline_json(const Roofline& r) {
  json j = {{"algorithmic_intensity", number(r.algorithmic_intensity)},
            {"peak_tflops", number(r.peak_tflops)},
            {"peak_gbps", number(r.peak_gbps)},
            {"peak_source", r.peak_source},
            {"ridge_intensity", number(r.ridge_intensity)},
            {"attainable_tflops", number(r.attainable_tflops)},
            {"bound", r.bound}};
  put_opt(j, "achieved_intensity", r.achieved_intensity);
  put_opt(j, "pct_of_roofline", r.pct_of_roofline);
  return j;
}

Roofline roofline_from(const json& j, const std::string& path) {
  require_object(j, path);
  Roofline r;
  get_double(j, "algorithmic_intensity", path, r.algorithmic_intensity);
  r.achieved_intensity = opt_double(j, "achieved_intensity", path);
  get_double(j, "peak_tflops", path, r.peak_tflops);
  get_double(j, "peak_gbps", path, r.peak_gbps);
  get_string(j, "peak_source", path, r.peak_source);
  get_double(j, "ridge_intensity", path, r.ridge_intensity);
  get_double(j, "attainable_tflops", path, r.attainable_tflops);
  r.pct_of_roofline = opt_double(j, "pct_of_roofline", path);
  get_string(j, "bound", path, r.bound);
  return r;
}

json gpu_json(const GpuInfo& g) {
  json j = {{"name", g.name},
            {"cc", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
            {"sms", g.sms},
            {"l2_bytes", g.l2_bytes},
            {"mem_bytes", g.mem_bytes},
            {"pci_bus_id", g.pci_bus_id}};
  json clocks = json::object();
  put_opt(clocks, "sm_mhz", g.sm_clock_mhz);
  put_opt(clocks, "mem_mhz", g.mem_clock_mhz);
  if (!clocks.empty()) j["clocks"] = std::move(clocks);
  put_opt(j, "mem_bus_bits", g.mem_bus_bits);
  return j;
}

GpuInfo gpu_from(const json& j, const std::string& path) {
  require_object(j, path);
  GpuInfo g;
  get_string(j, "name", path, g.name);
  if (const json* cc = find(j, "cc")) {
    const std::string s = as_string(*cc, child(path, "cc"));
    const auto dot = s.find('.');
    std::size_t used_major = 0, used_minor = 0;
    try {
      if (dot == std::string::npos) throw std::invalid_argument(s);
      g.cc_major = std::stoi(s.substr(0, dot), &used_major);
      g.cc_minor = std::stoi(s.substr(dot + 1), &used_minor);
    } catch (const std::logic_error&) {
      fail(child(path, "cc"), "expected \"major.minor\" such as \"9.0\", got \"" + s + "\"");
    }
    if (used_major != dot || used_minor != s.size() - dot - 1)
      fail(child(path, "cc"), "expected \"major.minor\" such as \"9.0\", got \"" + s + "\"");
  }
  get_int(j, "sms", path, g.sms);
  get_int64(j, "l2_bytes", path, g.l2_bytes);
  get_int64(j, "mem_bytes", path, g.mem_bytes);
  if (const json* c = find(j, "clocks")) {
    const std::string cpath = child(path, "clocks");
    require_object(*c, cpath);
    g.sm_clock_mhz = opt_double(*c, "sm_mhz", cpath);
    g.mem_clock_mhz = opt_double(*c, "mem_mhz", cpath);
  }
  g.mem_bus_bits = opt_double(j, "mem_bus_bits", path);
  get_string(j, "pci_bus_id", path, g.pci_bus_id);
  return g;
}

json protocol_json(const Protocol& p) {
  return {{"warmup_ms", number(p.warmup_ms)},
          {"min_samples", p.min_samples},
          {"max_samples", p.max_samples},
          {"max_time_s", number(p.max_time_s)},
          {"noise_pct", number(p.noise_pct)},
          {"l2", std::string(to_string(p.l2))},
          {"graphs", p.graphs},
          {"graph_batch", p.graph_batch},
          {"seed", p.seed},
          {"check", p.check},
          {"metrics", p.metrics}};
}

Protocol protocol_from(const json& j, const std::string& path) {
  require_object(j, path);
  Protocol p;
  get_double(j, "warmup_ms", path, p.warmup_ms);
  get_int(j, "min_samples", path, p.min_samples);
  get_int(j, "max_samples", path, p.max_samples);
  get_double(j, "max_time_s", path, p.max_time_s);
  get_double(j, "noise_pct", path, p.noise_pct);
  if (const json* l2 = find(j, "l2")) {
    const std::string s = as_string(*l2, child(path, "l2"));
    const auto mode = parse_l2_mode(s);
    if (!mode) fail(child(path, "l2"), "expected \"cold\" or \"warm\", got \"" + s + "\"");
    p.l2 = *mode;
  }
  get_bool(j, "graphs", path, p.graphs);
  get_int(j, "graph_batch", path, p.graph_batch);
  if (const json* seed = find(j, "seed")) {
    if (!seed->is_number_integer() || (!seed->is_number_unsigned() && seed->get<std::int64_t>() < 0))
      fail(child(path, "seed"), "expected a non-negative integer, got " + seed->dump());
    p.seed = seed->get<std::uint64_t>();
  }
  get_bool(j, "check", path, p.check);
  get_string(j, "metrics", path, p.metrics);
  return p;
}

json peaks_json(const Peaks& p) {
  json j = json::object();
  put_opt(j, "tensor_tflops_measured", p.tensor_tflops_measured);
  put_opt(j, "dram_gbps_measured", p.dram_gbps_measured);
  put_opt(j, "tensor_tflops_datasheet", p.tensor_tflops_datasheet);
  put_opt(j, "dram_gbps_datasheet", p.dram_gbps_datasheet);
  put_opt(j, "tensor_tflops_fp16_measured", p.tensor_tflops_fp16_measured);
  put_opt(j, "tensor_tflops_bf16_measured", p.tensor_tflops_bf16_measured);
  if (!p.measured_at.empty()) j["measured_at"] = p.measured_at;
  return j;
}

Peaks peaks_from(const json& j, const std::string& path) {
  require_object(j, path);
  Peaks p;
  p.tensor_tflops_measured = opt_double(j, "tensor_tflops_measured", path);
  p.dram_gbps_measured = opt_double(j, "dram_gbps_measured", path);
  p.tensor_tflops_datasheet = opt_double(j, "tensor_tflops_datasheet", path);
  p.dram_gbps_datasheet = opt_double(j, "dram_gbps_datasheet", path);
  p.tensor_tflops_fp16_measured = opt_double(j, "tensor_tflops_fp16_measured", path);
  p.tensor_tflops_bf16_measured = opt_double(j, "tensor_tflops_bf16_measured", path);
  get_string(j, "measured_at", path, p.measured_at);
  return p;
}

json timing_json(const TimingStats& t) {
  return {{"median_ms", number(t.median_ms)},
          {"min_ms", number(t.min_ms)},
          {"max_ms", number(t.max_ms)},
          {"mean_ms", number(t.mean_ms)},
          {"std_ms", number(t.std_ms)},
          {"q1_ms", number(t.q1_ms)},
          {"q3_ms", number(t.q3_ms)},
          {"samples", t.samples},
          {"noise_pct", number(t.noise_pct)},
          {"converged", t.converged},
          {"launches_per_sample", t.launches_per_sample}};
}

TimingStats timing_from(const json& j, const std::string& path) {
  require_object(j, path);
  TimingStats t;
  t.median_ms = as_double(req(j, "median_ms", path), child(path, "median_ms"));
  get_double(j, "min_ms", path, t.min_ms);
  get_double(j, "max_ms", path, t.max_ms);
  get_double(j, "mean_ms", path, t.mean_ms);
  get_double(j, "std_ms", path, t.std_ms);
  get_double(j, "q1_ms", path, t.q1_ms);
  get_double(j, "q3_ms", path, t.q3_ms);
  get_int(j, "samples", path, t.samples);
  get_double(j, "noise_pct", path, t.noise_pct);
  get_bool(j, "converged", path, t.converged);
  get_int(j, "launches_per_sample", path, t.launches_per_sample);
  return t;
}

json correctness_json(const Correctness& c) {
  json j = {{"max_abs", number(c.max_abs)}, {"rel_l2", number(c.rel_l2)},
            {"tol", number(c.tol)},         {"pass", c.pass},
            {"reference", c.reference},     {"tol_rule", c.tol_rule},
            {"nonfinite", c.nonfinite}};
  put_opt(j, "sampled_rows_rel_l2", c.sampled_rows_rel_l2);
  put_opt(j, "sampled_rows", c.sampled_rows);
  return j;
}

Correctness correctness_from(const json& j, const std::string& path) {
  require_object(j, path);
  Correctness c;
  get_double(j, "max_abs", path, c.max_abs);
  get_double(j, "rel_l2", path, c.rel_l2);
  get_double(j, "tol", path, c.tol);
  c.pass = as_bool(req(j, "pass", path), child(path, "pass"));
  get_string(j, "reference", path, c.reference);
  get_string(j, "tol_rule", path, c.tol_rule);
  get_int64(j, "nonfinite", path, c.nonfinite);
  c.sampled_rows_rel_l2 = opt_double(j, "sampled_rows_rel_l2", path);
  c.sampled_rows = opt_int64(j, "sampled_rows", path);
  return c;
}

Problem problem_from(const json& j, const std::string& path) {
  require_object(j, path);
  Problem p;
  p.batch = as_int64(req(j, "batch", path), child(path, "batch"));
  p.heads_q = as_int64(req(j, "heads_q", path), child(path, "heads_q"));
  p.heads_kv = p.heads_q;
  get_int64(j, "heads_kv", path, p.heads_kv);
  p.seq_q = as_int64(req(j, "seq_q", path), child(path, "seq_q"));
  p.seq_kv = p.seq_q;
  get_int64(j, "seq_kv", path, p.seq_kv);
  p.head_dim = as_int64(req(j, "head_dim", path), child(path, "head_dim"));
  p.head_dim_v = p.head_dim;
  get_int64(j, "head_dim_v", path, p.head_dim_v);
  const std::string dtype = as_string(req(j, "dtype", path), child(path, "dtype"));
  const auto dt = parse_dtype(dtype);
  if (!dt) fail(child(path, "dtype"), "expected fp16, bf16 or fp32, got \"" + dtype + "\"");
  p.dtype = *dt;
  get_bool(j, "causal", path, p.causal);
  if (const json* w = find(j, "window")) {
    const std::string wpath = child(path, "window");
    if (!w->is_array() || w->size() != 2) fail(wpath, "expected [left, right], got " + w->dump());
    p.window.left = as_int64((*w)[0], wpath + "[0]");
    p.window.right = as_int64((*w)[1], wpath + "[1]");
  }
  if (const json* layout = find(j, "layout")) {
    const std::string s = as_string(*layout, child(path, "layout"));
    if (s != "bshd") fail(child(path, "layout"), "expected \"bshd\", got \"" + s + "\"");
    p.layout = Layout::bshd;
  }
  return p;
}

}  // namespace

std::string record_kind(const json& j) {
  if (!j.is_object()) fail("record", "expected a JSON object, got " + type_of(j));
  const json* schema = find(j, "schema");
  if (schema == nullptr) fail("schema", "missing: not an attnscope result record");
  const std::string s = as_string(*schema, "schema");
  if (s != kResultSchema)
    fail("schema", "expected \"" + std::string(kResultSchema) + "\", got \"" + s + "\"");
  const json* record = find(j, "record");
  if (record == nullptr) fail("record", "missing: expected \"run\" or \"case\"");
  const std::string kind = as_string(*record, "record");
  if (kind != "run" && kind != "case") fail("record", "expected \"run\" or \"case\", got \"" + kind + "\"");
  return kind;
}

void to_json(json& j, const Problem& p) {
  j = {{"batch", p.batch},
       {"heads_q", p.heads_q},
       {"heads_kv", p.heads_kv},
       {"seq_q", p.seq_q},
       {"seq_kv", p.seq_kv},
       {"head_dim", p.head_dim},
       {"head_dim_v", p.head_dim_v},
       {"dtype", std::string(to_string(p.dtype))},
       {"causal", p.causal},
       {"window", json::array({p.window.left, p.window.right})},
       {"layout", "bshd"}};
}

void from_json(const json& j, Problem& p) { p = problem_from(j, "problem"); }

json protocol_to_json(const Protocol& p) { return protocol_json(p); }
Protocol protocol_from_json(const json& j, const std::string& path) { return protocol_from(j, path); }

json to_json(const RunInfo& run) {
  json j = {{"schema", std::string(kResultSchema)},
            {"record", "run"},
            {"run_id", run.run_id},
            {"started_at", run.started_at},
            {"version", run.version},
            {"git_commit", run.git_commit},
            {"command_line", run.command_line},
            {"host", run.host},
            {"backend", run.backend},
            {"driver", run.driver},
            {"cuda_runtime", run.cuda_runtime},
            {"cudnn", run.cudnn},
            {"cupti", run.cupti},
            {"cpu_model", run.cpu_model},
            {"cpu_threads", run.cpu_threads},
            {"protocol", protocol_json(run.protocol)},
            {"peaks", peaks_json(run.peaks)},
            {"baseline", run.baseline}};
  if (run.gpu) j["gpu"] = gpu_json(*run.gpu);
  if (!run.os.empty()) j["os"] = run.os;
  if (!run.metrics_status.empty()) j["metrics_status"] = run.metrics_status;
  if (!run.metrics_reason.empty()) j["metrics_reason"] = run.metrics_reason;
  if (!run.metrics_names.empty()) j["metrics_names"] = run.metrics_names;
  if (run.metrics_passes) j["metrics_passes"] = *run.metrics_passes;
  return j;
}

RunInfo run_info_from_json(const json& j) {
  check_record(j, "run");
  const std::string path = "run";
  RunInfo r;
  r.schema = j.at("schema").get<std::string>();
  get_string(j, "run_id", path, r.run_id);
  get_string(j, "started_at", path, r.started_at);
  get_string(j, "version", path, r.version);
  get_string(j, "git_commit", path, r.git_commit);
  get_string(j, "command_line", path, r.command_line);
  get_string(j, "host", path, r.host);
  get_string(j, "backend", path, r.backend);
  if (const json* g = find(j, "gpu")) r.gpu = gpu_from(*g, child(path, "gpu"));
  get_string(j, "driver", path, r.driver);
  get_string(j, "cuda_runtime", path, r.cuda_runtime);
  get_string(j, "cudnn", path, r.cudnn);
  get_string(j, "cupti", path, r.cupti);
  get_string(j, "cpu_model", path, r.cpu_model);
  get_int(j, "cpu_threads", path, r.cpu_threads);
  get_string(j, "os", path, r.os);
  if (const json* p = find(j, "protocol")) r.protocol = protocol_from(*p, child(path, "protocol"));
  if (const json* p = find(j, "peaks")) r.peaks = peaks_from(*p, child(path, "peaks"));
  get_string(j, "baseline", path, r.baseline);
  get_string(j, "metrics_status", path, r.metrics_status);
  get_string(j, "metrics_reason", path, r.metrics_reason);
  if (const json* names = find(j, "metrics_names")) {
    const std::string npath = child(path, "metrics_names");
    if (!names->is_array()) fail(npath, "expected an array of metric names, got " + type_of(*names));
    for (std::size_t i = 0; i < names->size(); ++i)
      r.metrics_names.push_back(as_string((*names)[i], npath + "[" + std::to_string(i) + "]"));
  }
  if (const json* n = find(j, "metrics_passes")) r.metrics_passes = as_int(*n, child(path, "metrics_passes"));
  return r;
}

json to_json(const CaseResult& c) {
  json knobs = json::object();
  for (const auto& [name, value] : c.knobs) knobs[name] = value;
  json j = {{"schema", std::string(kResultSchema)},
            {"record", "case"},
            {"case_id", c.case_id},
            {"kernel", c.kernel},
            {"knobs", std::move(knobs)},
            {"problem", c.problem},
            {"status", std::string(to_string(c.status))},
            {"reason", c.reason},
            {"flops", number(c.flops)},
            {"min_bytes", c.min_bytes},
            {"nvtx_range", c.nvtx_range},
            {"wall_s", number(c.wall_s)}};
  if (!c.variant.empty()) j["variant"] = c.variant;
  if (c.timing) j["timing"] = timing_json(*c.timing);
  put_opt(j, "tflops", c.tflops);
  put_opt(j, "gbps", c.gbps);
  put_opt(j, "queries_per_s", c.queries_per_s);
  if (c.correctness) j["correctness"] = correctness_json(*c.correctness);
  if (c.device_bytes_peak) j["memory"] = {{"device_bytes_peak", *c.device_bytes_peak}};
  if (c.clocks && !clocks_empty(*c.clocks)) j["clocks"] = clocks_json(*c.clocks);
  if (!c.launch.empty()) {
    json launch = json::array();
    for (const auto& l : c.launch) launch.push_back(launch_json(l));
    j["launch"] = std::move(launch);
  }
  if (c.metrics) j["metrics"] = metrics_json(*c.metrics);
  if (!c.metrics_status.empty()) j["metrics_status"] = c.metrics_status;
  if (!c.metrics_reason.empty()) j["metrics_reason"] = c.metrics_reason;
  if (c.roofline) j["roofline"] = roofline_json(*c.roofline);
  if (!c.ncu_command.empty()) j["ncu_command"] = c.ncu_command;
  return j;
}

CaseResult case_result_from_json(const json& j) {
  check_record(j, "case");
  const std::string path = "case";
  CaseResult c;
  c.case_id = as_string(req(j, "case_id", path), child(path, "case_id"));
  c.kernel = as_string(req(j, "kernel", path), child(path, "kernel"));
  if (const json* knobs = find(j, "knobs")) {
    const std::string kpath = child(path, "knobs");
    require_object(*knobs, kpath);
    for (const auto& [name, value] : knobs->items()) c.knobs[name] = as_int(value, child(kpath, name));
  }
  if (const json* v = find(j, "variant")) {
    c.variant = as_string(*v, child(path, "variant"));
    if (const std::string why = variant_label_mismatch(c.variant, c.kernel, c.knobs); !why.empty())
      fail(child(path, "variant"), "\"" + c.variant + "\" " + why);
  }
  c.problem = problem_from(req(j, "problem", path), child(path, "problem"));
  const std::string status = as_string(req(j, "status", path), child(path, "status"));
  const auto st = parse_status(status);
  if (!st)
    fail(child(path, "status"),
         "expected ok, skipped, mismatch, oom, fault, timeout or error, got \"" + status + "\"");
  c.status = *st;
  get_string(j, "reason", path, c.reason);
  if (const json* t = find(j, "timing")) c.timing = timing_from(*t, child(path, "timing"));
  get_double(j, "flops", path, c.flops);
  get_int64(j, "min_bytes", path, c.min_bytes);
  c.tflops = opt_double(j, "tflops", path);
  c.gbps = opt_double(j, "gbps", path);
  c.queries_per_s = opt_double(j, "queries_per_s", path);
  if (const json* k = find(j, "correctness"))
    c.correctness = correctness_from(*k, child(path, "correctness"));
  if (const json* m = find(j, "memory")) {
    const std::string mpath = child(path, "memory");
    require_object(*m, mpath);
    c.device_bytes_peak = opt_int64(*m, "device_bytes_peak", mpath);
  }
  get_string(j, "nvtx_range", path, c.nvtx_range);
  if (const json* k = find(j, "clocks")) {
    // An all-absent clocks object reads as absent, as the writer omits it.
    Clocks clocks = clocks_from(*k, child(path, "clocks"));
    if (!clocks_empty(clocks)) c.clocks = clocks;
  }
  get_double(j, "wall_s", path, c.wall_s);
  if (const json* l = find(j, "launch")) {
    const std::string lpath = child(path, "launch");
    if (!l->is_array()) fail(lpath, "expected an array, got " + type_of(*l));
    for (std::size_t i = 0; i < l->size(); ++i)
      c.launch.push_back(launch_from((*l)[i], lpath + "[" + std::to_string(i) + "]"));
  }
  if (const json* m = find(j, "metrics")) c.metrics = metrics_from(*m, child(path, "metrics"));
  get_string(j, "metrics_status", path, c.metrics_status);
  get_string(j, "metrics_reason", path, c.metrics_reason);
  if (const json* r = find(j, "roofline")) c.roofline = roofline_from(*r, child(path, "roofline"));
  get_string(j, "ncu_command", path, c.ncu_command);
  return c;
}

}  // namespace attn
