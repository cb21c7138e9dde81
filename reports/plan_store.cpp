// plan.jsonl writer (atomic replace) and reader (see plan_store.hpp).
#include "reports/plan_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "reports/jsonl_store.hpp"
#include "reports/result_json.hpp"
#include "reports/worker_json.hpp"

namespace attn {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::string_view kPlanSchema = "attnscope.plan.v1";

[[noreturn]] void io_fail(const fs::path& file, std::string_view what, int err) {
  throw ResultsIoError(file.string() + ": " + std::string(what) + ": " + std::strerror(err));
}

void fsync_path(const fs::path& p, int flags) {
  const int fd = ::open(p.empty() ? "." : p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_plan(const fs::path& file, const PlanFile& plan) {
  json header = {{"schema", std::string(kPlanSchema)},
                 {"record", "plan"},
                 {"backend", std::string(to_string(plan.backend))},
                 {"debug_kernels", plan.debug_kernels},
                 {"plan_cases", plan.plan_cases},
                 {"cases", plan.cases.size()}};
  if (plan.shard) header["shard"] = plan.shard->text();
  if (!plan.plan_id.empty()) header["plan_id"] = plan.plan_id;
  if (plan.protocol) header["protocol"] = protocol_to_json(*plan.protocol);
  if (!plan.baseline.empty()) header["baseline"] = plan.baseline;
  if (!plan.plugins.empty()) header["plugins"] = plan.plugins;
  std::string text = header.dump() + "\n";
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    json line = case_to_json(plan.cases[i]);
    line["index"] = plan.plan_index.at(i);
    text += line.dump(-1, ' ', false, json::error_handler_t::replace);
    text += '\n';
  }
  const fs::path tmp = file.string() + ".tmp";
  {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) io_fail(tmp, "cannot create", errno);
    std::string_view rest = text;
    while (!rest.empty()) {
      const ssize_t n = ::write(fd, rest.data(), rest.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::close(fd);
        io_fail(tmp, "write", err);
      }
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) io_fail(tmp, "fsync/close", errno);
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) io_fail(file, "rename", errno);
  fsync_path(file.parent_path(), O_RDONLY | O_DIRECTORY);
}

PlanFile read_plan(const fs::path& file) {
  std::ifstream in(file);
  if (!in) io_fail(file, "cannot open for reading", errno);
  PlanFile plan;
  std::string line;
  std::size_t line_no = 0;
  std::size_t expected = 0;
  bool have_header = false;
  auto where = [&] { return file.string() + ":" + std::to_string(line_no) + ": "; };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error& e) {
      throw ResultsFormatError(where() + "not valid JSON: " + e.what());
    }
    try {
      if (!have_header) {
        if (!j.is_object() || j.value("schema", "") != kPlanSchema || j.value("record", "") != "plan")
          throw ResultsFormatError("expected a plan header with schema \"" + std::string(kPlanSchema) + "\"");
        const auto backend = parse_backend(j.value("backend", ""));
        if (!backend) throw ResultsFormatError("plan.backend: expected \"cpu\" or \"cuda\"");
        plan.backend = *backend;
        plan.debug_kernels = j.value("debug_kernels", false);
        plan.plan_cases = j.at("plan_cases").get<std::size_t>();
        expected = j.at("cases").get<std::size_t>();
        if (j.contains("shard")) plan.shard = parse_shard(j.at("shard").get<std::string>());
        plan.plan_id = j.value("plan_id", "");
        if (j.contains("protocol")) plan.protocol = protocol_from_json(j.at("protocol"), "plan.protocol");
        plan.baseline = j.value("baseline", "");
        if (j.contains("plugins")) plan.plugins = j.at("plugins").get<std::vector<std::string>>();
        have_header = true;
        continue;
      }
      plan.cases.push_back(case_from_json(j, "case"));
      plan.plan_index.push_back(j.at("index").get<std::size_t>());
    } catch (const ResultsFormatError& e) {
      throw ResultsFormatError(where() + e.what());
    } catch (const std::exception& e) {
      throw ResultsFormatError(where() + e.what());
    }
  }
  if (!have_header) throw ResultsFormatError(file.string() + ": empty plan file");
  if (plan.cases.size() != expected)
    throw ResultsFormatError(file.string() + ": the header announces " + std::to_string(expected) +
                             " cases, the file holds " + std::to_string(plan.cases.size()));
  return plan;
}

}  // namespace attn
