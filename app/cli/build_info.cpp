// The build's identity, from the compile definitions CMake sets on this file alone.
#include "app/cli/build_info.hpp"

namespace attn::cli {

const std::string& build_version() {
  static const std::string v = ATTNSCOPE_VERSION;
  return v;
}

const std::string& build_git_commit() {
  static const std::string c = ATTNSCOPE_GIT_COMMIT;
  return c;
}

const std::string& build_source_dir() {
  static const std::string d = ATTNSCOPE_SOURCE_DIR;
  return d;
}

const std::string& build_python() {
  static const std::string p = ATTNSCOPE_PYTHON;
  return p;
}

const std::string& build_install_prefix() {
  static const std::string d = ATTNSCOPE_INSTALL_PREFIX;
  return d;
}

const std::string& build_python_package_dir() {
  static const std::string d = ATTNSCOPE_PYTHON_PACKAGE_DIR;
  return d;
}

}  // namespace attn::cli
