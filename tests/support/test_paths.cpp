// The paths of test_paths.hpp, from this file's compile definitions.
#include "tests/support/test_paths.hpp"

#ifndef ATTNSCOPE_GUI_BINARY
#define ATTNSCOPE_GUI_BINARY ""
#endif
#ifndef ATTNSCOPE_BINARY
#define ATTNSCOPE_BINARY ""
#endif
#ifndef ATTNSCOPE_EXAMPLE_PLUGIN
#define ATTNSCOPE_EXAMPLE_PLUGIN ""
#endif
#ifndef ATTNSCOPE_CUDA_EXAMPLE_PLUGIN
#define ATTNSCOPE_CUDA_EXAMPLE_PLUGIN ""
#endif
#ifndef ATTNSCOPE_TEST_PLUGIN_DIR
#define ATTNSCOPE_TEST_PLUGIN_DIR ""
#endif

namespace attn::test {

const std::string& source_dir() {
  static const std::string d = ATTNSCOPE_SOURCE_DIR;
  return d;
}

const std::string& cli_binary() {
  static const std::string b = ATTNSCOPE_BINARY;
  return b;
}

const std::string& gui_binary() {
  static const std::string b = ATTNSCOPE_GUI_BINARY;
  return b;
}

const std::string& example_plugin() {
  static const std::string p = ATTNSCOPE_EXAMPLE_PLUGIN;
  return p;
}

const std::string& cuda_example_plugin() {
  static const std::string p = ATTNSCOPE_CUDA_EXAMPLE_PLUGIN;
  return p;
}

std::string test_plugin(const std::string& name) {
  return std::string(ATTNSCOPE_TEST_PLUGIN_DIR) + "/libattnscope_test_plugin_" + name + ".so";
}

}  // namespace attn::test
