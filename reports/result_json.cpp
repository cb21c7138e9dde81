// attnscope.result.v1 <-> JSON: field names as DESIGN.md "Result records", nullopt omitted,
// non-finite doubles as strings, strict types with the field path in every error.
#include "reports/result_json.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

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

json clocks_json(const Clocks& c) {
  json j = json::object();
  put_opt(j, "sm_mhz", c.sm_mhz);
  put_opt(j, "mem_mhz", c.mem_mhz);
  put_opt(j, "temp_c", c.temp_c);
  put_opt(j, "power_w", c.power_w);
  return j;
}

bool clocks_empty(const Clocks& c) { return !c.sm_mhz && !c.mem_mhz && !c.temp_c && !c.power_w; }

Clocks clocks_from(const json& j, const std::string& path) {
  require_object(j, path);
  Clocks c;
  c.sm_mhz = opt_double(j, "sm_mhz", path);
  c.mem_mhz = opt_double(j, "mem_mhz", path);
  c.temp_c = opt_double(j, "temp_c", path);
  c.power_w = opt_double(j, "power_w", path);
  return c;
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
          {"check", p.check}};
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
  return p;
}

json peaks_json(const Peaks& p) {
  json j = json::object();
  put_opt(j, "tensor_tflops_measured", p.tensor_tflops_measured);
  put_opt(j, "dram_gbps_measured", p.dram_gbps_measured);
  put_opt(j, "tensor_tflops_datasheet", p.tensor_tflops_datasheet);
  put_opt(j, "dram_gbps_datasheet", p.dram_gbps_datasheet);
  return j;
}

Peaks peaks_from(const json& j, const std::string& path) {
  require_object(j, path);
  Peaks p;
  p.tensor_tflops_measured = opt_double(j, "tensor_tflops_measured", path);
  p.dram_gbps_measured = opt_double(j, "dram_gbps_measured", path);
  p.tensor_tflops_datasheet = opt_double(j, "tensor_tflops_datasheet", path);
  p.dram_gbps_datasheet = opt_double(j, "dram_gbps_datasheet", path);
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
  if (const json* p = find(j, "protocol")) r.protocol = protocol_from(*p, child(path, "protocol"));
  if (const json* p = find(j, "peaks")) r.peaks = peaks_from(*p, child(path, "peaks"));
  get_string(j, "baseline", path, r.baseline);
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
  if (c.timing) j["timing"] = timing_json(*c.timing);
  put_opt(j, "tflops", c.tflops);
  put_opt(j, "gbps", c.gbps);
  put_opt(j, "queries_per_s", c.queries_per_s);
  if (c.correctness) j["correctness"] = correctness_json(*c.correctness);
  if (c.device_bytes_peak) j["memory"] = {{"device_bytes_peak", *c.device_bytes_peak}};
  if (c.clocks && !clocks_empty(*c.clocks)) j["clocks"] = clocks_json(*c.clocks);
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
  return c;
}

}  // namespace attn
