// Where the tests find the checkout and the executables under test. The paths come from compile
// definitions on test_paths.cpp alone, so the test sources compile the same in every checkout.
#pragma once
#include <string>

namespace attn::test {

const std::string& source_dir();  // the checkout (assets/presets, tests/golden, tools/)
const std::string& cli_binary();
// The C example plug-in (examples/plugins/cpu_naive.c), and a test plug-in refused for `name`
// (bad_abi, no_entry, dup_id, null_run; tests/plugins/bad_plugin.c).
const std::string& example_plugin();
// The CUDA example plug-in (examples/plugins/cuda_tiled.cu); empty in a build without CUDA.
const std::string& cuda_example_plugin();
std::string test_plugin(const std::string& name);  // build/attnscope
const std::string& gui_binary();                   // build/attnscope-gui; empty where the GUI is not built

}  // namespace attn::test
