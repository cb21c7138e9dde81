// What this build is (version, git commit) and where its source tree lies. One translation unit
// carries these values, so a new commit or another checkout rebuilds one file, not every file
// of the app (and ccache serves the rest across checkouts).
#pragma once
#include <string>

namespace attn::cli {

const std::string& build_version();             // "0.1.0"
const std::string& build_git_commit();          // 12 hex digits, or "unknown"
const std::string& build_source_dir();          // the checkout it was configured from (presets, fonts)
const std::string& build_python();              // the interpreter the Python module was built for ("" = none)
const std::string& build_python_package_dir();  // the build tree's python/ folder
const std::string& build_install_prefix();      // CMAKE_INSTALL_PREFIX (installed presets)

}  // namespace attn::cli
