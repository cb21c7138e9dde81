// The paths of test_paths.hpp, from this file's compile definitions.
#include "tests/support/test_paths.hpp"

#ifndef ATTNSCOPE_GUI_BINARY
#define ATTNSCOPE_GUI_BINARY ""
#endif
#ifndef ATTNSCOPE_BINARY
#define ATTNSCOPE_BINARY ""
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

}  // namespace attn::test
