// run_extent_json.hpp: devices, totals and peaks of the run record.
#include "reports/run_extent_json.hpp"

#include "reports/json_fields.hpp"
#include "reports/result_json.hpp"

namespace attn {

using json = nlohmann::json;
using namespace json_fields;

json peaks_to_json(const Peaks& p) {
  json j = json::object();
  put_opt(j, "tensor_tflops_measured", p.tensor_tflops_measured);
  put_opt(j, "dram_gbps_measured", p.dram_gbps_measured);
  put_opt(j, "tensor_tflops_datasheet", p.tensor_tflops_datasheet);
  put_opt(j, "dram_gbps_datasheet", p.dram_gbps_datasheet);
  put_opt(j, "tensor_tflops_fp16_measured", p.tensor_tflops_fp16_measured);
  put_opt(j, "tensor_tflops_bf16_measured", p.tensor_tflops_bf16_measured);
  put_opt(j, "l2_gbps_measured", p.l2_gbps_measured);
  if (!p.measured_at.empty()) j["measured_at"] = p.measured_at;
  return j;
}

Peaks peaks_from_json(const json& j, const std::string& path) {
  require_object(j, path);
  Peaks p;
  p.tensor_tflops_measured = opt_double(j, "tensor_tflops_measured", path);
  p.dram_gbps_measured = opt_double(j, "dram_gbps_measured", path);
  p.tensor_tflops_datasheet = opt_double(j, "tensor_tflops_datasheet", path);
  p.dram_gbps_datasheet = opt_double(j, "dram_gbps_datasheet", path);
  p.tensor_tflops_fp16_measured = opt_double(j, "tensor_tflops_fp16_measured", path);
  p.tensor_tflops_bf16_measured = opt_double(j, "tensor_tflops_bf16_measured", path);
  p.l2_gbps_measured = opt_double(j, "l2_gbps_measured", path);
  get_string(j, "measured_at", path, p.measured_at);
  return p;
}

json run_devices_json(const std::vector<RunDevice>& devices) {
  json a = json::array();
  for (const RunDevice& d : devices) {
    json j = {{"host", d.host}, {"index", d.index}, {"name", d.name}, {"peaks", peaks_to_json(d.peaks)}};
    if (!d.uuid.empty()) j["uuid"] = d.uuid;
    if (!d.worker.empty()) j["worker"] = d.worker;
    a.push_back(std::move(j));
  }
  return a;
}

std::vector<RunDevice> run_devices_from(const json& j, const std::string& path) {
  if (!j.is_array()) throw ResultsFormatError(path + ": expected an array of devices, got " + type_of(j));
  std::vector<RunDevice> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const json& d = require_object(j[i], p);
    RunDevice r;
    get_string(d, "host", p, r.host);
    get_int(d, "index", p, r.index);
    get_string(d, "uuid", p, r.uuid);
    get_string(d, "name", p, r.name);
    get_string(d, "worker", p, r.worker);
    if (const json* pk = find(d, "peaks")) r.peaks = peaks_from_json(*pk, child(p, "peaks"));
    out.push_back(std::move(r));
  }
  return out;
}

json run_plugins_json(const std::vector<PluginRecord>& plugins) {
  json a = json::array();
  for (const PluginRecord& p : plugins) {
    json e = {
        {"path", p.path}, {"size", p.size}, {"sha256", p.sha256}, {"name", p.name}, {"kernels", p.kernels}};
    if (p.kind != "library") e["kind"] = p.kind;
    if (!p.compile.empty()) e["compile"] = p.compile;
    if (!p.watched.empty()) e["watched"] = p.watched;
    if (p.version > 0) e["version"] = p.version;
    if (!p.versions.empty()) e["versions"] = p.versions;
    a.push_back(std::move(e));
  }
  return a;
}

std::vector<PluginRecord> run_plugins_from(const json& j, const std::string& path) {
  if (!j.is_array()) throw ResultsFormatError(path + ": expected an array of plug-ins, got " + type_of(j));
  std::vector<PluginRecord> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const json& e = require_object(j[i], p);
    PluginRecord r;
    get_string(e, "path", p, r.path);
    get_int64(e, "size", p, r.size);
    get_string(e, "sha256", p, r.sha256);
    get_string(e, "name", p, r.name);
    if (const json* k = find(e, "kernels")) {
      if (!k->is_array()) throw ResultsFormatError(p + ".kernels: expected an array of kernel ids");
      for (std::size_t n = 0; n < k->size(); ++n) r.kernels.push_back(as_string((*k)[n], p + ".kernels"));
    }
    get_string(e, "kind", p, r.kind);
    if (r.kind != "library" && r.kind != "source" && r.kind != "python")
      throw ResultsFormatError(p + ".kind: '" + r.kind + "'; expected \"library\", \"source\" or \"python\"");
    get_string(e, "watched", p, r.watched);
    if (const json* v = find(e, "version")) {
      if (!v->is_number_integer() || v->get<int>() < 1)
        throw ResultsFormatError(p + ".version: expected a positive integer, got " + v->dump());
      r.version = v->get<int>();
    }
    if (const json* c = find(e, "compile")) {
      if (!c->is_array()) throw ResultsFormatError(p + ".compile: expected an array of strings");
      for (std::size_t n = 0; n < c->size(); ++n) r.compile.push_back(as_string((*c)[n], p + ".compile"));
    }
    if (const json* v = find(e, "versions")) {
      if (!v->is_array()) throw ResultsFormatError(p + ".versions: expected an array of strings");
      for (std::size_t n = 0; n < v->size(); ++n) r.versions.push_back(as_string((*v)[n], p + ".versions"));
    }
    out.push_back(std::move(r));
  }
  return out;
}

json run_totals_json(const RunTotals& t) {
  json phases = json::object();
  for (const auto& [key, member] : case_phase_fields()) put_opt(phases, key, t.phases.*member);
  return {{"wall_s", number(t.wall_s)},
          {"cases", t.cases},
          {"case_wall_s", number(t.case_wall_s)},
          {"phases", std::move(phases)},
          {"worker_start_s", number(t.worker_start_s)},
          {"handoff_s", number(t.handoff_s)},
          {"idle_s", number(t.idle_s)},
          {"slots", t.slots}};
}

RunTotals run_totals_from(const json& j, const std::string& path) {
  require_object(j, path);
  RunTotals t;
  get_double(j, "wall_s", path, t.wall_s);
  get_int(j, "cases", path, t.cases);
  get_double(j, "case_wall_s", path, t.case_wall_s);
  if (const json* ph = find(j, "phases")) {
    const std::string p = child(path, "phases");
    require_object(*ph, p);
    for (const auto& [key, member] : case_phase_fields()) t.phases.*member = opt_double(*ph, key, p);
  }
  get_double(j, "worker_start_s", path, t.worker_start_s);
  get_double(j, "handoff_s", path, t.handoff_s);
  get_double(j, "idle_s", path, t.idle_s);
  get_int(j, "slots", path, t.slots);
  return t;
}

}  // namespace attn
