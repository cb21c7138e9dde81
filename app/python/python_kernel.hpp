// Python callables as kernels inside this process: the loader the Python module installs
// (kernels/api/python_entry.hpp), so that workers started as `python -m attnscope worker` (and
// in-process runs from Python) prepare, run and check them like any registry entry.
#pragma once
#include <pybind11/pybind11.h>

#include <string>

#include "kernels/api/python_entry.hpp"

namespace attn::python {

// Installs the loader; called once when the module is imported.
void install_python_loader();

// An entry's kernels as python -m attnscope describe reports them: {name, versions, kernels: [{id,
// description, backward}]}, or {error} with the reason.
pybind11::dict describe_entry(const std::string& entry_text, const std::string& backend);

// "ValueError: message (file.py:12 in attention)": an exception's type, message and innermost frame.
std::string python_error_text(pybind11::error_already_set& e);

}  // namespace attn::python
