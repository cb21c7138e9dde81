// Python kernels seen from the C++ front-ends (CLI and GUI, which hold no Python themselves): where
// the interpreter and the attnscope package are, the loader that learns an entry's kernels from
// `python3 -m attnscope describe`, and the worker program that runs them (docs/python.md).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "profiling/sweep/sweep_spec.hpp"

namespace attn::cli {

// The interpreter ($ATTNSCOPE_PYTHON, else the one the module was built for, else python3) and the
// folder holding the attnscope package ($ATTNSCOPE_PYTHON_PATH, else python/ next to this
// executable, else the build tree's).
struct PythonRuntime {
  std::string python;
  std::string package_dir;
};
PythonRuntime python_runtime();

// Installs the describe loader unless a loader is installed already (the Python module's own).
// Its kernels plan like any other; their cases run in Python workers only.
void install_python_describe_loader();

// `--python-kernel FILE.py:FUNC[=ID]` (or a built-in adapter's id, torch.flash) values as
// load_plugins() entries; throws PluginError.
std::vector<std::string> python_kernel_entries(const std::vector<std::string>& specs);
// What every front-end does with --python-kernel: installs the describe loader, sets the backend
// Python kernels load for, and loads `specs`; throws PluginError.
void load_python_kernels(const std::vector<std::string>& specs, Backend backend);

// Appends "python:<id>" to spec.plugins for each kernel the sweep names that is a built-in Python
// adapter (torch.*, triton.*) and not registered yet.
void add_python_adapter_entries(SweepSpec& spec);
// The same for a --kernels list ("torch.flash,cudnn.sdpa@..."), as load_plugins() entries.
std::vector<std::string> python_adapter_entries(const std::string& kernel_list);

// The built-in Python adapters and whether each can load here (`why` says what is missing).
struct PythonAdapterStatus {
  std::string id;
  bool available = false;
  std::string why;
};
// Throws PluginError when the attnscope package itself cannot be asked (the reason names the paths).
std::vector<PythonAdapterStatus> python_adapters();

// Whether a Python kernel is registered in this process.
bool python_kernels_loaded();

// How workers of this process start: `self_exe worker`, or the Python worker
// (`python -m attnscope worker`, the package on PYTHONPATH) when Python kernels are loaded or this
// process is the Python module.
struct WorkerProgram {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
};
WorkerProgram worker_program(const std::string& self_exe);
// The Python module starts its workers with its own interpreter (sys.executable).
void set_python_worker_interpreter(const std::string& python);

}  // namespace attn::cli
