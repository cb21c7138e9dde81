// Python kernels as registry entries (docs/python.md): a user's callable `FILE.py:FUNC[=ID]` or one
// of the built-in adapters (torch.flash, torch.flex, triton.fa2, ...). kernels/ knows only their
// entry text, `python:<file>:<func>[=<id>]` or `python:<adapter id>`, which travels like a plug-in
// path (run records, plans, worker setups); a front-end with a Python at hand (the `attnscope`
// module, app/python/) installs the loader that turns an entry into kernels.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/api/kernel_spec.hpp"

namespace attn {

inline constexpr std::string_view kPythonEntryPrefix = "python:";

struct PythonEntry {
  std::string file;      // absolute path of the user's .py file; empty for a built-in adapter
  std::string function;  // the callable's name in that file (a dotted path for an attribute)
  std::string id;        // the kernel id (the adapter id for a built-in one)
  bool builtin() const { return file.empty(); }
  // "python:<file>:<func>=<id>" or "python:<adapter id>", as load_plugins() takes it.
  std::string text() const;
};

// `FILE.py:FUNC[=ID]` as typed after --python-kernel (or in a preset's python_kernels): FILE made
// absolute against `base_dir` (empty: the working directory), ID defaulting to "<file stem>.<FUNC>"
// in lower case. Throws PluginError naming `flag`, the value and what is expected.
PythonEntry parse_python_kernel_spec(std::string_view spec, const std::string& base_dir = {},
                                     std::string_view flag = "--python-kernel");
// What --python-kernel or a preset's python_kernels names, as the entry text load_plugins() takes:
// a built-in adapter's id (torch.flash) or FILE.py:FUNC[=ID] as parse_python_kernel_spec reads it.
std::string python_entry_text(std::string_view spec, const std::string& base_dir = {},
                              std::string_view flag = "--python-kernel");
// The entry of a load_plugins() path that starts with "python:"; nullopt for other paths. Throws
// PluginError for a malformed one.
std::optional<PythonEntry> parse_python_entry(std::string_view path);
// Whether `id` names a built-in Python adapter: the families torch.* and triton.* (their list and
// availability come from the Python side, `python3 -m attnscope describe`).
bool is_python_adapter_id(std::string_view id);

// What a loader makes of one entry: the kernels to register and what the run record says of them.
struct PythonKernels {
  std::vector<KernelSpec> specs;
  std::string name;                   // "python callable" or the adapter family's name
  std::vector<std::string> versions;  // "Python 3.12.3", "torch 2.11.0+cu130", ...
};
// Turns an entry into kernels of `backend` (tensors are torch CUDA tensors on cuda, NumPy arrays on
// cpu). Throws PluginError with the reason (an import error's last line, a missing function).
using PythonKernelLoader = std::function<PythonKernels(const PythonEntry& entry, Backend backend)>;

// Installed by a front-end; without one, load_plugins() refuses python entries and says why.
void set_python_kernel_loader(PythonKernelLoader loader);
bool python_kernel_loader_installed();
// The backend python entries are loaded for (load_plugins() passes it to the loader); the front-end
// sets it to the run's backend. Python kernels registered already move to `backend`. Default: cpu.
void set_python_kernel_backend(Backend backend);
Backend python_kernel_backend();
// Loads one entry through the installed loader (load_plugins() calls it).
PythonKernels load_python_entry(const PythonEntry& entry);

}  // namespace attn
