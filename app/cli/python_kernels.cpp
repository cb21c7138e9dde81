// Python kernels for the C++ front-ends (python_kernels.hpp).
#include "app/cli/python_kernels.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/cli/build_info.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "kernels/api/python_entry.hpp"
#include "kernels/registry.hpp"
#include "profiling/sweep/command_line.hpp"
#include "profiling/sweep/variant.hpp"

namespace attn::cli {

namespace {

namespace fs = std::filesystem;

std::string& module_interpreter() {
  static std::string python;
  return python;
}

fs::path self_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self.parent_path();
}

// The line `python -m attnscope describe` prints its answer on (other output may come before it).
constexpr std::string_view kDescribeTag = "ATTNSCOPE_DESCRIBE ";

// Runs `python -m attnscope describe ARGS` and returns its JSON answer; throws PluginError with the
// reason, prefixed by `what`.
nlohmann::json describe(const std::string& what, const std::vector<std::string>& args) {
  const PythonRuntime rt = python_runtime();
  std::vector<std::string> argv{rt.python, "-m", "attnscope", "describe"};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string command =
      fmt::format("ATTNSCOPE_PYTHON_WORKER=1 PYTHONPATH={}${{PYTHONPATH:+:$PYTHONPATH}} {} 2>&1",
                  shell_quote(rt.package_dir), join_command_line(argv));
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw PluginError(what + ": cannot start " + rt.python);
  std::string output;
  char buf[4096];
  while (const std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = ::pclose(pipe);
  const auto tag = output.rfind(kDescribeTag);
  if (tag == std::string::npos) {
    std::string last = output;
    while (!last.empty() && last.back() == '\n') last.pop_back();
    if (const auto nl = last.rfind('\n'); nl != std::string::npos) last = last.substr(nl + 1);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    throw PluginError(fmt::format(
        "{}: `{} -m attnscope describe` gave no answer (exit {}): {}; the attnscope package is looked for "
        "in {} (set ATTNSCOPE_PYTHON_PATH to the folder holding it, ATTNSCOPE_PYTHON to the interpreter)",
        what, rt.python, code, last.empty() ? "(no output)" : last, rt.package_dir));
  }
  const std::size_t start = tag + kDescribeTag.size();
  const std::size_t end = output.find('\n', start);
  nlohmann::json j = nlohmann::json::parse(output.substr(start, end == std::string::npos ? end : end - start),
                                           nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw PluginError(what + ": describe answered unreadable JSON");
  if (j.contains("error")) throw PluginError(j["error"].get<std::string>());
  return j;
}

// A kernel the describe answer names, as this process registers it: it plans here and runs only in a
// Python worker.
KernelSpec worker_only_spec(const nlohmann::json& k, Backend backend) {
  KernelSpec s;
  s.id = k.at("id").get<std::string>();
  s.description = k.value("description", std::string());
  s.backend = backend;
  // What a Python kernel takes is asked in the worker, at prepare: a refusal is `skipped` there.
  s.why_not = [](const Problem&, const Knobs&) { return std::string(); };
  const std::string id = s.id;
  s.prepare = [id](const Problem&, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    throw KernelError(id +
                      " is a Python kernel: it runs in a Python worker (python3 -m attnscope worker), "
                      "not in this process; drop --in-process");
  };
  if (k.value("backward", false))
    s.backward_why_not = [](const Problem&, const Knobs&) { return std::string(); };
  s.compressed_mask = k.value("compressed_mask", false);
  s.varlen = k.value("varlen", false);
  return s;
}

PythonKernels load_described(const PythonEntry& entry, Backend backend) {
  const nlohmann::json j =
      describe(entry.text(), {"--backend", std::string(to_string(backend)), entry.text()});
  PythonKernels out;
  out.name = j.value("name", std::string("python"));
  if (const auto v = j.find("versions"); v != j.end() && v->is_array())
    for (const auto& s : *v) out.versions.push_back(s.get<std::string>());
  for (const auto& k : j.at("kernels")) out.specs.push_back(worker_only_spec(k, backend));
  return out;
}

// The entry of an unregistered adapter named by a kernel variant's text, or "".
std::string adapter_entry(std::string_view text) {
  AxisProblem ignored;
  const auto v = try_parse_kernel_variant(text, ignored);
  if (!v || find_kernel(v->kernel) || !is_python_adapter_id(v->kernel)) return {};
  return std::string(kPythonEntryPrefix) + v->kernel;
}

}  // namespace

PythonRuntime python_runtime() {
  PythonRuntime rt;
  if (const char* p = std::getenv("ATTNSCOPE_PYTHON"); p && *p)
    rt.python = p;
  else if (!module_interpreter().empty())
    rt.python = module_interpreter();
  else if (!build_python().empty() && fs::exists(build_python()))
    rt.python = build_python();
  else
    rt.python = "python3";
  // Workers are executed directly (no shell, no PATH search): a bare name is looked up here.
  if (rt.python.find('/') == std::string::npos)
    if (const char* path = std::getenv("PATH"))
      for (std::string_view rest = path; !rest.empty();) {
        const std::size_t colon = std::min(rest.find(':'), rest.size());
        const fs::path candidate = fs::path(std::string(rest.substr(0, colon))) / rt.python;
        rest = rest.substr(std::min(colon + 1, rest.size()));
        if (::access(candidate.c_str(), X_OK) == 0) {
          rt.python = candidate.string();
          break;
        }
      }
  std::error_code ec;
  if (const char* d = std::getenv("ATTNSCOPE_PYTHON_PATH"); d && *d)
    rt.package_dir = d;
  else if (const fs::path next = self_dir() / "python"; fs::exists(next / "attnscope" / "__init__.py", ec))
    rt.package_dir = next.string();
  else
    rt.package_dir = build_python_package_dir();
  return rt;
}

void install_python_describe_loader() {
  if (!python_kernel_loader_installed()) set_python_kernel_loader(load_described);
}

std::vector<std::string> python_kernel_entries(const std::vector<std::string>& specs) {
  std::vector<std::string> out;
  for (const std::string& s : specs) out.push_back(python_entry_text(s));
  return out;
}

void load_python_kernels(const std::vector<std::string>& specs, Backend backend) {
  install_python_describe_loader();
  set_python_kernel_backend(backend);
  load_plugins(python_kernel_entries(specs));
}

void add_python_adapter_entries(SweepSpec& spec) {
  for (const std::string& text : spec.kernels) {
    const std::string entry = adapter_entry(text);
    if (!entry.empty() && std::find(spec.plugins.begin(), spec.plugins.end(), entry) == spec.plugins.end())
      spec.plugins.push_back(entry);
  }
}

std::vector<std::string> python_adapter_entries(const std::string& kernel_list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= kernel_list.size()) {
    const std::size_t comma = std::min(kernel_list.find(',', start), kernel_list.size());
    const std::string entry = adapter_entry(std::string_view(kernel_list).substr(start, comma - start));
    if (!entry.empty() && std::find(out.begin(), out.end(), entry) == out.end()) out.push_back(entry);
    start = comma + 1;
  }
  return out;
}

std::vector<PythonAdapterStatus> python_adapters() {
  const nlohmann::json j = describe("Python adapters", {"--adapters"});
  std::vector<PythonAdapterStatus> out;
  for (const auto& a : j.at("adapters"))
    out.push_back(
        {a.at("id").get<std::string>(), a.value("available", false), a.value("why", std::string())});
  return out;
}

bool python_kernels_loaded() {
  for (const PluginInfo& p : loaded_plugins())
    if (p.kind == "python") return true;
  return false;
}

void set_python_worker_interpreter(const std::string& python) { module_interpreter() = python; }

WorkerProgram worker_program(const std::string& self_exe) {
  if (!python_kernels_loaded() && module_interpreter().empty()) return {{self_exe, "worker"}, {}};
  const PythonRuntime rt = python_runtime();
  std::string path = rt.package_dir;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) {
    path += ":";
    path += old;
  }
  return {{rt.python, "-m", "attnscope", "worker"}, {{"PYTHONPATH", path}, {"ATTNSCOPE_PYTHON_WORKER", "1"}}};
}

}  // namespace attn::cli
