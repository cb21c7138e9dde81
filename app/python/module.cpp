// The `attnscope._attnscope` extension: the engine's command line in this process (plan, run,
// worker, kernels, report... exactly as the `attnscope` executable runs them), the registry, result
// records, and Python kernels. The friendly API (attnscope.run, plan, load) is python/attnscope/.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "app/cli/build_info.hpp"
#include "app/cli/cli.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/python_kernels.hpp"
#include "app/python/dlpack_view.hpp"
#include "app/python/python_kernel.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "kernels/registry.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/result_json.hpp"

namespace py = pybind11;

namespace {

// `attnscope ARGS...` in this process; the GIL is released while it runs (Python kernels take it
// back when they are called).
int run_main(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"attnscope"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> ptrs;
  for (std::string& a : argv) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  py::gil_scoped_release release;
  return attn::cli::main(static_cast<int>(argv.size()), ptrs.data());
}

// The run record and every case record of a results file (or run directory), as the C++ reader
// validates them, re-encoded as JSON text.
py::tuple read_results(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path file = path;
  if (fs::is_directory(file)) file /= "results.jsonl";
  attn::LoadedRun loaded;
  try {
    loaded = attn::read_results(file);
  } catch (const std::exception& e) {
    throw py::value_error(e.what());
  }
  std::vector<std::string> cases;
  for (const attn::CaseResult& r : loaded.cases) cases.push_back(attn::to_json(r).dump());
  return py::make_tuple(attn::to_json(loaded.run).dump(), cases);
}

py::list registry() {
  py::list out;
  for (const attn::KernelSpec* k : attn::listed_kernels()) {
    py::dict d;
    d["id"] = k->id;
    d["description"] = k->description;
    d["backend"] = std::string(attn::to_string(k->backend));
    d["backward"] = static_cast<bool>(k->backward_why_not);
    const attn::PluginInfo* origin = attn::plugin_of(k->id);
    d["origin"] = origin ? origin->kind + ":" + origin->path : std::string("builtin");
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_attnscope, m) {
  m.doc() = "attnscope's engine: the command line, the registry, result records and Python kernels";
  attn::python::register_dlpack_view(m);
  attn::python::install_python_loader();
  m.def("main", &run_main, py::arg("args"),
        "Runs `attnscope ARGS...` in this process (workers it starts are Python workers); returns the exit "
        "code");
  m.def("set_worker_interpreter", &attn::cli::set_python_worker_interpreter, py::arg("python"),
        "The interpreter that workers started from this process run (sys.executable)");
  m.def("describe", &attn::python::describe_entry, py::arg("entry"), py::arg("backend"),
        "The kernels of a python:... entry, or {'error': reason}");
  m.def("read_results", &read_results, py::arg("path"),
        "(run record, [case records]) of a results file or run directory, as JSON text");
  m.def("registry", &registry, "Every registered kernel: id, description, backend, backward, origin");
  m.def("build_version",
        [] { return attn::cli::build_version() + " (" + attn::cli::build_git_commit() + ")"; });
  m.def("presets_dir", &attn::cli::presets_dir);
}
