// JSON lines of the worker protocol (see worker_json.hpp). Every decode error is a
// WorkerProtocolError naming the field.
#include "reports/worker_json.hpp"

#include "profiling/sweep/plan.hpp"
#include "reports/result_json.hpp"

namespace attn {

using nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw WorkerProtocolError(path + ": " + what);
}

const json& member(const json& j, const char* key, const std::string& path) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) fail(path + "." + key, "required field is missing");
  return *it;
}

std::string string_member(const json& j, const char* key, const std::string& path) {
  const json& v = member(j, key, path);
  if (!v.is_string()) fail(path + "." + key, std::string("expected a string, got ") + v.type_name());
  return v.get<std::string>();
}

// The worker record kind ("setup" or "case") after checking the schema tag.
std::string worker_record(const json& j, const std::string& path) {
  if (!j.is_object()) fail(path, std::string("expected a JSON object, got ") + j.type_name());
  const std::string schema = string_member(j, "schema", path);
  if (schema != kWorkerSchema)
    fail(path + ".schema", "expected \"" + std::string(kWorkerSchema) + "\", got \"" + schema + "\"");
  return string_member(j, "record", path);
}

json parse_line(std::string_view line) {
  try {
    return json::parse(line);
  } catch (const json::parse_error& e) {
    throw WorkerProtocolError(std::string("not valid JSON: ") + e.what());
  }
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

json case_to_json(const Case& c) {
  json knobs = json::object();
  for (const auto& [name, value] : c.knobs) knobs[name] = value;
  json j = {{"schema", std::string(kWorkerSchema)},
            {"record", "case"},
            {"case_id", c.case_id},
            {"kernel", c.kernel},
            {"knobs", std::move(knobs)},
            {"problem", c.problem}};
  if (!c.skip_reason.empty()) j["skip_reason"] = c.skip_reason;
  return j;
}

Case case_from_json(const json& j, const std::string& path) {
  const std::string kind = worker_record(j, path);
  if (kind != "case") fail(path + ".record", "expected \"case\", got \"" + kind + "\"");
  Case c;
  c.case_id = string_member(j, "case_id", path);
  c.kernel = string_member(j, "kernel", path);
  if (const auto it = j.find("knobs"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) fail(path + ".knobs", std::string("expected an object, got ") + it->type_name());
    for (const auto& [name, value] : it->items()) {
      if (!value.is_number_integer())
        fail(path + ".knobs." + name, "expected an integer, got " + value.dump());
      c.knobs[name] = value.get<int>();
    }
  }
  try {
    c.problem = member(j, "problem", path).get<Problem>();
  } catch (const ResultsFormatError& e) {
    fail(path, e.what());
  }
  if (const auto it = j.find("skip_reason"); it != j.end() && it->is_string())
    c.skip_reason = it->get<std::string>();
  const std::string expected = make_case_id(c.kernel, c.knobs, c.problem);
  if (expected != c.case_id)
    fail(path + ".case_id", "\"" + c.case_id +
                                "\" does not match its kernel, knobs and problem (expected \"" + expected +
                                "\"; written by another attnscope version?)");
  return c;
}

json setup_to_json(const WorkerSetup& s) {
  json j = {{"schema", std::string(kWorkerSchema)},
            {"record", "setup"},
            {"backend", std::string(to_string(s.backend))},
            {"device", s.device},
            {"debug_kernels", s.debug_kernels},
            {"protocol", protocol_to_json(s.protocol)}};
  if (!s.plugins.empty()) j["plugins"] = s.plugins;
  return j;
}

WorkerSetup setup_from_json(const json& j, const std::string& path) {
  const std::string kind = worker_record(j, path);
  if (kind != "setup") fail(path + ".record", "expected \"setup\", got \"" + kind + "\"");
  WorkerSetup s;
  const std::string backend = string_member(j, "backend", path);
  const auto b = parse_backend(backend);
  if (!b) fail(path + ".backend", "expected \"cpu\" or \"cuda\", got \"" + backend + "\"");
  s.backend = *b;
  const json& device = member(j, "device", path);
  if (!device.is_number_integer() || device.get<std::int64_t>() < 0 || device.get<std::int64_t>() > 4096)
    fail(path + ".device", "expected a device index 0..4096, got " + device.dump());
  s.device = device.get<int>();
  if (const auto it = j.find("debug_kernels"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) fail(path + ".debug_kernels", "expected true or false, got " + it->dump());
    s.debug_kernels = it->get<bool>();
  }
  if (const auto it = j.find("plugins"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) fail(path + ".plugins", "expected an array of library paths, got " + it->dump());
    for (const json& p : *it) {
      if (!p.is_string()) fail(path + ".plugins", "expected library paths (strings), got " + p.dump());
      s.plugins.push_back(p.get<std::string>());
    }
  }
  try {
    s.protocol = protocol_from_json(member(j, "protocol", path), path + ".protocol");
  } catch (const ResultsFormatError& e) {
    throw WorkerProtocolError(e.what());
  }
  return s;
}

std::string JsonWorkerCodec::encode_setup(const WorkerSetup& setup) const {
  return dump(setup_to_json(setup));
}

std::string JsonWorkerCodec::encode_case(const Case& c, const std::optional<Problem>& next_problem) const {
  json j = case_to_json(c);
  if (next_problem) j["next_problem"] = *next_problem;
  return dump(j);
}

WorkerInput JsonWorkerCodec::decode_input(std::string_view line) const {
  const json j = parse_line(line);
  const std::string kind = worker_record(j, "input");
  WorkerInput in;
  if (kind == "setup")
    in.setup = setup_from_json(j, "setup");
  else if (kind == "case") {
    in.work = case_from_json(j, "case");
    if (const auto it = j.find("next_problem"); it != j.end() && !it->is_null()) {
      try {
        in.next_problem = it->get<Problem>();
      } catch (const ResultsFormatError& e) {
        fail("case.next_problem", e.what());
      }
      if (const std::string why = in.next_problem->validate(); !why.empty()) fail("case.next_problem", why);
    }
  } else
    fail("input.record", "expected \"setup\" or \"case\", got \"" + kind + "\"");
  return in;
}

std::string JsonWorkerCodec::encode_device(const RunInfo& device) const { return dump(to_json(device)); }

RunInfo JsonWorkerCodec::decode_device(std::string_view line) const {
  try {
    return run_info_from_json(parse_line(line));
  } catch (const ResultsFormatError& e) {
    throw WorkerProtocolError(e.what());
  }
}

std::string JsonWorkerCodec::encode_result(const CaseResult& r) const { return dump(to_json(r)); }

CaseResult JsonWorkerCodec::decode_result(std::string_view line) const {
  try {
    return case_result_from_json(parse_line(line));
  } catch (const ResultsFormatError& e) {
    throw WorkerProtocolError(e.what());
  }
}

}  // namespace attn
