// attnscope.result.v1 <-> JSON: field names as docs/design.md "Result records", nullopt omitted,
// non-finite doubles as strings, strict types with the field path in every error.
#include "reports/result_json.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <variant>

#include "profiling/field_catalogue.hpp"
#include "profiling/sweep/variant.hpp"
#include "reports/json_fields.hpp"
#include "reports/run_extent_json.hpp"

namespace attn {

using nlohmann::json;

namespace {

using namespace json_fields;  // the path-named readers and the number writer

void get_metrics_status(const json& obj, const std::string& path, MetricsStatus& out) {
  const json* v = find(obj, "metrics_status");
  if (v == nullptr) return;
  const std::string s = as_string(*v, child(path, "metrics_status"));
  const auto st = parse_metrics_status(s);
  if (!st)
    fail(child(path, "metrics_status"),
         std::string("expected ") + kMetricsStatusAllowed + ", got \"" + s + "\"");
  out = *st;
}

void check_record(const json& j, std::string_view want) {
  const std::string kind = record_kind(j);
  if (kind != want) fail("record", "expected a \"" + std::string(want) + "\" record, got \"" + kind + "\"");
}

// ---- catalogue fields -----------------------------------------------------------------------

json value_json(const FieldValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return number(*d);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  return std::get<std::string>(v);
}

FieldValue value_from(const json& v, FieldType type, const std::string& path) {
  switch (type) {
    case FieldType::real:
      return as_double(v, path);
    case FieldType::int32:
      return static_cast<std::int64_t>(as_int(v, path));
    case FieldType::int64:
      return as_int64(v, path);
    case FieldType::boolean:
      return as_bool(v, path);
    case FieldType::text:
      break;
  }
  return as_string(v, path);
}

// The member at dotted `key_path` ("timing.median_ms"), objects created on the way.
json& member_at(json& j, std::string_view key_path) {
  json* at = &j;
  std::size_t start = 0;
  for (auto dot = key_path.find('.'); dot != std::string_view::npos; dot = key_path.find('.', start)) {
    at = &(*at)[std::string(key_path.substr(start, dot - start))];
    start = dot + 1;
  }
  return (*at)[std::string(key_path.substr(start))];
}

// The object at dotted `key_path` below `j`, or nullptr when a part is absent; a part that is not
// an object is an error naming its path (below `path`).
const json* object_at(const json& j, std::string_view key_path, const std::string& path) {
  const json* at = &j;
  std::string at_path = path;
  std::size_t start = 0;
  while (start <= key_path.size()) {
    const std::size_t dot = std::min(key_path.find('.', start), key_path.size());
    const std::string_view key = key_path.substr(start, dot - start);
    at = find(*at, key);
    at_path = child(at_path, key);
    if (at == nullptr) return nullptr;
    require_object(*at, at_path);
    start = dot + 1;
  }
  return at;
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

void put_extra(json& j, const KernelMetrics& k) {
  if (k.extra.empty()) return;
  json extra = json::object();
  for (const auto& [name, v] : k.extra) extra[name] = number(v);
  j["extra"] = std::move(extra);
}

void put_kernel_metrics(json& j, const KernelMetrics& k) {
  for (const FieldDesc& f : case_fields())
    if (f.metric) put_opt(j, std::string(f.name).c_str(), k.*f.metric);
  put_extra(j, k);
}

void get_extra(const json& j, const std::string& path, KernelMetrics& k) {
  if (const json* e = find(j, "extra")) {
    const std::string epath = child(path, "extra");
    require_object(*e, epath);
    for (const auto& [name, v] : e->items()) k.extra[name] = as_double(v, child(epath, name));
  }
}

void get_kernel_metrics(const json& j, const std::string& path, KernelMetrics& k) {
  require_object(j, path);
  for (const FieldDesc& f : case_fields())
    if (f.metric) k.*f.metric = opt_double(j, f.name, path);
  get_extra(j, path, k);
}

// The parts of a case's metrics object the catalogue does not spell: the aggregate's `extra`,
// one row per kernel, and the pass bookkeeping.
void put_metrics_rest(json& j, const CaseMetrics& m) {
  put_extra(j, m.aggregate);
  json kernels = json::array();
  for (const auto& k : m.kernels) {
    json row = {{"name", k.name}};
    put_kernel_metrics(row, k);
    kernels.push_back(std::move(row));
  }
  j["kernels"] = std::move(kernels);
  j["passes"] = m.passes;
  if (!m.replay.empty()) j["replay"] = m.replay;
  j["wall_s"] = number(m.wall_s);
}

void get_metrics_rest(const json& j, const std::string& path, CaseMetrics& m) {
  get_extra(j, path, m.aggregate);
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
  get_string(j, "replay", path, m.replay);
  get_double(j, "wall_s", path, m.wall_s);
}

json gpu_json(const GpuInfo& g) {
  json j = {{"name", g.name},
            {"cc", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
            {"sms", g.sms},
            {"l2_bytes", g.l2_bytes},
            {"mem_bytes", g.mem_bytes},
            {"pci_bus_id", g.pci_bus_id}};
  if (!g.uuid.empty()) j["uuid"] = g.uuid;
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
  get_string(j, "uuid", path, g.uuid);
  return g;
}

json protocol_json(const Protocol& p) {
  json j = {{"warmup_ms", number(p.warmup_ms)},
            {"min_samples", p.min_samples},
            {"max_samples", p.max_samples},
            {"max_time_s", number(p.max_time_s)},
            {"noise_pct", number(p.noise_pct)},
            {"l2", std::string(to_string(p.l2))},
            {"graphs", p.graphs},
            {"graph_batch", p.graph_batch},
            {"seed", p.seed},
            {"check", p.check},
            {"metrics", p.metrics},
            {"metrics_replay", std::string(to_string(p.metrics_replay))}};
  if (p.cooldown_ms > 0) j["cooldown_ms"] = number(p.cooldown_ms);  // absent: none (and in older records)
  return j;
}

Protocol protocol_from(const json& j, const std::string& path) {
  require_object(j, path);
  Protocol p;
  get_double(j, "warmup_ms", path, p.warmup_ms);
  get_double(j, "cooldown_ms", path, p.cooldown_ms);
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
  // Records from before the field existed were measured with CUPTI's kernel replay.
  p.metrics_replay = MetricsReplay::kernel;
  if (const json* m = find(j, "metrics_replay")) {
    const std::string s = as_string(*m, child(path, "metrics_replay"));
    const auto mode = parse_metrics_replay(s);
    if (!mode)
      fail(child(path, "metrics_replay"), "expected \"auto\", \"case\" or \"kernel\", got \"" + s + "\"");
    p.metrics_replay = *mode;
  }
  return p;
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
  if (const json* c = find(j, "compress")) {
    const std::string cpath = child(path, "compress");
    if (!c->is_array() || c->size() != 2) fail(cpath, "expected [block, stride], got " + c->dump());
    p.compress.block = as_int64((*c)[0], cpath + "[0]");
    p.compress.stride = as_int64((*c)[1], cpath + "[1]");
  }
  if (const json* s = find(j, "select")) {
    const std::string spath = child(path, "select");
    if (!s->is_array() || s->size() != 3) fail(spath, "expected [block, count, seed], got " + s->dump());
    p.select.block = as_int64((*s)[0], spath + "[0]");
    p.select.count = as_int64((*s)[1], spath + "[1]");
    const std::int64_t seed = as_int64((*s)[2], spath + "[2]");
    if (seed < 0) fail(spath + "[2]", "expected a seed >= 0, got " + std::to_string(seed));
    p.select.seed = static_cast<std::uint64_t>(seed);
  }
  if (const json* f = find(j, "select_file")) {
    const std::string fpath = child(path, "select_file");
    if (!f->is_object())
      fail(fpath, "expected {\"path\": ..., \"sha256\": ..., \"pairs\": ...}, got " + f->dump());
    const json& file = req(*f, "path", fpath);
    const json& sha = req(*f, "sha256", fpath);
    if (!file.is_string() || !sha.is_string()) fail(fpath, "path and sha256 are strings, got " + f->dump());
    p.select.file = file.get<std::string>();
    p.select.file_sha256 = sha.get<std::string>();
    p.select.file_pairs = as_int64(req(*f, "pairs", fpath), child(fpath, "pairs"));
  }
  if (const json* v = find(j, "varlen")) {
    const std::string vpath = child(path, "varlen");
    if (!v->is_object()) fail(vpath, "expected {\"q\": [lengths], \"kv\": [lengths]}, got " + v->dump());
    for (const auto& [key, lengths] : {std::pair{"q", &p.varlen.q}, std::pair{"kv", &p.varlen.kv}}) {
      const json& a = req(*v, key, vpath);
      if (!a.is_array()) fail(child(vpath, key), "expected an array of lengths, got " + a.dump());
      for (std::size_t i = 0; i < a.size(); ++i)
        lengths->push_back(as_int64(a[i], child(vpath, key) + "[" + std::to_string(i) + "]"));
    }
  }
  if (const json* layout = find(j, "layout")) {
    const std::string s = as_string(*layout, child(path, "layout"));
    if (s != "bshd") fail(child(path, "layout"), "expected \"bshd\", got \"" + s + "\"");
    p.layout = Layout::bshd;
  }
  if (const json* pass = find(j, "pass")) {
    const std::string s = as_string(*pass, child(path, "pass"));
    const auto parsed = parse_pass(s);
    if (!parsed) fail(child(path, "pass"), std::string("expected ") + kPassAllowed + ", got \"" + s + "\"");
    p.pass = *parsed;
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
  if (p.pass != Pass::fwd) j["pass"] = std::string(to_string(p.pass));  // absent: the forward
  if (p.compress != Compress{})                                         // absent: none
    j["compress"] = json::array({p.compress.block, p.compress.stride});
  if (p.select != Select{})  // absent: none
    j["select"] = json::array({p.select.block, p.select.count, static_cast<std::int64_t>(p.select.seed)});
  if (p.select.from_file())  // absent: drawn from the seed
    j["select_file"] = {
        {"path", p.select.file}, {"sha256", p.select.file_sha256}, {"pairs", p.select.file_pairs}};
  if (p.varlen.active()) j["varlen"] = {{"q", p.varlen.q}, {"kv", p.varlen.kv}};  // absent: dense
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
            {"peaks", peaks_to_json(run.peaks)},
            {"baseline", run.baseline}};
  if (run.gpu) j["gpu"] = gpu_json(*run.gpu);
  if (!run.os.empty()) j["os"] = run.os;
  if (run.metrics_status != MetricsStatus::not_attempted)
    j["metrics_status"] = std::string(to_string(run.metrics_status));
  if (!run.metrics_reason.empty()) j["metrics_reason"] = run.metrics_reason;
  if (!run.metrics_names.empty()) j["metrics_names"] = run.metrics_names;
  if (run.metrics_passes) j["metrics_passes"] = *run.metrics_passes;
  if (!run.devices.empty()) j["devices"] = run_devices_json(run.devices);
  if (run.totals) j["totals"] = run_totals_json(*run.totals);
  if (!run.plugins.empty()) j["plugins"] = run_plugins_json(run.plugins);
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
  if (const json* p = find(j, "peaks")) r.peaks = peaks_from_json(*p, child(path, "peaks"));
  get_string(j, "baseline", path, r.baseline);
  get_metrics_status(j, path, r.metrics_status);
  get_string(j, "metrics_reason", path, r.metrics_reason);
  if (const json* names = find(j, "metrics_names")) {
    const std::string npath = child(path, "metrics_names");
    if (!names->is_array()) fail(npath, "expected an array of metric names, got " + type_of(*names));
    for (std::size_t i = 0; i < names->size(); ++i)
      r.metrics_names.push_back(as_string((*names)[i], npath + "[" + std::to_string(i) + "]"));
  }
  if (const json* n = find(j, "metrics_passes")) r.metrics_passes = as_int(*n, child(path, "metrics_passes"));
  if (const json* d = find(j, "devices")) r.devices = run_devices_from(*d, child(path, "devices"));
  if (const json* t = find(j, "totals")) r.totals = run_totals_from(*t, child(path, "totals"));
  if (const json* p = find(j, "plugins")) r.plugins = run_plugins_from(*p, child(path, "plugins"));
  return r;
}

json to_json(const CaseResult& c) {
  json knobs = json::object();
  for (const auto& [name, value] : c.knobs) knobs[name] = value;
  json j = {{"schema", std::string(kResultSchema)},
            {"record", "case"},
            {"knobs", std::move(knobs)},
            {"problem", c.problem}};
  for (const FieldDesc& f : case_fields()) {
    if (!f.json) continue;
    const FieldValue v = f.get(c);
    if (std::holds_alternative<std::monostate>(v)) continue;
    member_at(j, f.path) = value_json(v);
  }
  if (c.clocks && c.clocks->throttle_mask) {
    json names = json::array();  // derived from the mask, for readers; not read back
    for (const auto& [bit, name] : kThrottleNames)
      if (*c.clocks->throttle_mask & bit) names.push_back(name);
    j["clocks"]["throttle_reasons"] = std::move(names);
  }
  if (!c.launch.empty()) {
    json launch = json::array();
    for (const auto& l : c.launch) launch.push_back(launch_json(l));
    j["launch"] = std::move(launch);
  }
  if (c.metrics) put_metrics_rest(j["metrics"], *c.metrics);
  return j;
}

CaseResult case_result_from_json(const json& j) {
  check_record(j, "case");
  const std::string path = "case";
  CaseResult c;
  for (const FieldGroup& g : case_field_groups())
    if (object_at(j, g.key, path)) g.emplace(c);
  for (const FieldDesc& f : case_fields()) {
    if (!f.json) continue;
    const auto dot = f.path.rfind('.');
    const json* parent = dot == std::string_view::npos ? &j : object_at(j, f.path.substr(0, dot), path);
    if (parent == nullptr) continue;
    const std::string_view leaf = dot == std::string_view::npos ? f.path : f.path.substr(dot + 1);
    const std::string fpath = child(path, f.path);
    const json* v = find(*parent, leaf);
    if (v == nullptr) {
      if (f.required) fail(fpath, "required field is missing");
      continue;
    }
    if (const std::string why = f.set(c, value_from(*v, f.type, fpath)); !why.empty()) fail(fpath, why);
  }
  if (const json* knobs = find(j, "knobs")) {
    const std::string kpath = child(path, "knobs");
    require_object(*knobs, kpath);
    for (const auto& [name, value] : knobs->items()) c.knobs[name] = as_int(value, child(kpath, name));
  }
  if (!c.variant.empty())
    if (const std::string why = variant_label_mismatch(c.variant, c.kernel, c.knobs); !why.empty())
      fail(child(path, "variant"), "\"" + c.variant + "\" " + why);
  c.problem = problem_from(req(j, "problem", path), child(path, "problem"));
  if (const json* l = find(j, "launch")) {
    const std::string lpath = child(path, "launch");
    if (!l->is_array()) fail(lpath, "expected an array, got " + type_of(*l));
    for (std::size_t i = 0; i < l->size(); ++i)
      c.launch.push_back(launch_from((*l)[i], lpath + "[" + std::to_string(i) + "]"));
  }
  if (c.metrics) get_metrics_rest(*object_at(j, "metrics", path), child(path, "metrics"), *c.metrics);
  return c;
}

}  // namespace attn
