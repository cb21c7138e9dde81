// Python kernel entries: parsing and the front-end's loader (python_entry.hpp).
#include "kernels/api/python_entry.hpp"

#include <cctype>
#include <filesystem>

#include "kernels/api/plugin_loader.hpp"
#include "kernels/registry.hpp"

namespace attn {

namespace {

PythonKernelLoader& loader() {
  static PythonKernelLoader l;
  return l;
}

Backend& backend_for_python() {
  static Backend b = Backend::cpu;
  return b;
}

// "My-Attn" -> "my_attn": the characters a kernel id allows.
std::string id_part(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : (c == '-' ? '-' : '_');
  }
  return out;
}

bool valid_python_name(std::string_view s) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  return !std::isdigit(static_cast<unsigned char>(s.front()));
}

bool valid_kernel_id(std::string_view id) {
  const auto dot = id.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == id.size()) return false;
  for (char c : id) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::islower(u) || std::isdigit(u) || c == '.' || c == '_' || c == '-')) return false;
  }
  return true;
}

}  // namespace

std::string PythonEntry::text() const {
  if (builtin()) return std::string(kPythonEntryPrefix) + id;
  return std::string(kPythonEntryPrefix) + file + ":" + function + "=" + id;
}

PythonEntry parse_python_kernel_spec(std::string_view spec, const std::string& base_dir,
                                     std::string_view flag) {
  const std::string given(spec);
  auto fail = [&](const std::string& what) {
    throw PluginError(std::string(flag) + " '" + given + "': " + what);
  };
  std::string_view rest = spec;
  std::string id;
  if (const auto eq = rest.rfind('='); eq != std::string_view::npos) {
    id = std::string(rest.substr(eq + 1));
    rest = rest.substr(0, eq);
    if (!valid_kernel_id(id))
      fail("ID '" + id + "': expected \"family.variant\" in lower case letters, digits, '_' or '-'");
  }
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    fail("expected FILE.py:FUNC[=ID], e.g. my_attn.py:attention=mine.v1");
  const std::string file(rest.substr(0, colon));
  const std::string function(rest.substr(colon + 1));
  if (!file.ends_with(".py")) fail("FILE '" + file + "': expected a Python file ending in .py");
  if (!valid_python_name(function))
    fail("FUNC '" + function + "': expected a Python name (letters, digits, '_', dots for attributes)");
  namespace fs = std::filesystem;
  fs::path p(file);
  if (p.is_relative()) p = (base_dir.empty() ? fs::current_path() : fs::path(base_dir)) / p;
  PythonEntry e;
  e.file = p.lexically_normal().string();
  e.function = function;
  e.id = id.empty() ? id_part(fs::path(file).stem().string()) + "." + id_part(function) : id;
  if (!valid_kernel_id(e.id)) fail("the default ID '" + e.id + "' is not a kernel id; give one with =ID");
  return e;
}

std::string python_entry_text(std::string_view spec, const std::string& base_dir, std::string_view flag) {
  if (spec.find(':') == std::string_view::npos && is_python_adapter_id(spec))
    return std::string(kPythonEntryPrefix) + std::string(spec);
  return parse_python_kernel_spec(spec, base_dir, flag).text();
}

std::optional<PythonEntry> parse_python_entry(std::string_view path) {
  if (!path.starts_with(kPythonEntryPrefix)) return std::nullopt;
  const std::string_view body = path.substr(kPythonEntryPrefix.size());
  if (body.find(':') == std::string_view::npos) {
    if (!is_python_adapter_id(body))
      throw PluginError(std::string(path) +
                        ": expected python:<adapter id> (torch.* or triton.*) or python:FILE.py:FUNC=ID");
    PythonEntry e;
    e.id = std::string(body);
    return e;
  }
  return parse_python_kernel_spec(body, {}, "python kernel");
}

bool is_python_adapter_id(std::string_view id) {
  return (id.starts_with("torch.") && id.size() > 6) || (id.starts_with("triton.") && id.size() > 7);
}

void set_python_kernel_loader(PythonKernelLoader l) { loader() = std::move(l); }
bool python_kernel_loader_installed() { return static_cast<bool>(loader()); }
void set_python_kernel_backend(Backend backend) {
  if (backend_for_python() == backend) return;
  backend_for_python() = backend;
  // Kernels loaded for the other backend follow: a Python callable takes either kind of tensor.
  std::vector<KernelSpec> moved;
  for (const PluginInfo& p : loaded_plugins())
    if (p.kind == "python")
      for (const std::string& id : p.kernels)
        if (const KernelSpec* s = find_kernel(id)) {
          moved.push_back(*s);
          moved.back().backend = backend;
        }
  replace_plugin_kernels(std::move(moved));
}
Backend python_kernel_backend() { return backend_for_python(); }

PythonKernels load_python_entry(const PythonEntry& entry) {
  if (!loader())
    throw PluginError(entry.text() +
                      ": Python kernels need attnscope's Python module, which this program has not "
                      "loaded: run a worker for them as `python3 -m attnscope worker` (docs/python.md)");
  return loader()(entry, backend_for_python());
}

}  // namespace attn
