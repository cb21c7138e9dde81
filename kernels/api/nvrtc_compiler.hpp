// CUDA source compiled at run time with NVRTC (loaded from the CUDA toolkit on first use; no GPU is
// needed to compile), with a cache of compiled code under the user's cache directory.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/api/plugin_loader.hpp"

namespace attn {

// One message of NVRTC's log, located in the source.
struct CompileDiagnostic {
  std::string file;
  int line = 0;
  int column = 0;        // 1-based; 0 when NVRTC showed no caret
  std::string severity;  // "error", "warning", "catastrophic error"
  std::string message;
  std::string source_line;
};

// What to compile: the file, the -D definitions of one configuration, the target architecture.
struct SourceBuild {
  std::string path;  // absolute
  std::vector<std::pair<std::string, std::string>> defines;
  std::string arch;                       // "sm_90a"
  std::vector<std::string> options;       // extra NVRTC options (the source's `@attnscope option:`)
  std::vector<std::string> include_dirs;  // searched after the file's own folder (absolute)
};

struct CompiledSource {
  std::string cubin;
  std::string log;                   // NVRTC's log (ptxas -v: registers, spills)
  std::string key;                   // SHA-256 the cache files are named by
  std::vector<std::string> options;  // the NVRTC options used
  std::string cache_file;            // empty when the cache could not be written
  bool from_cache = false;
  double compile_s = 0;
};

// A compile that failed. `unsupported` holds the reason when the source refused the configuration
// with `#error attnscope-unsupported: REASON` (the case is then skipped, not failed).
class SourceCompileError : public PluginError {
 public:
  SourceCompileError(const std::string& what, std::vector<CompileDiagnostic> diagnostics,
                     std::string unsupported)
      : PluginError(what), m_diagnostics(std::move(diagnostics)), m_unsupported(std::move(unsupported)) {}
  const std::vector<CompileDiagnostic>& diagnostics() const { return m_diagnostics; }
  const std::string& unsupported() const { return m_unsupported; }

 private:
  std::vector<CompileDiagnostic> m_diagnostics;
  std::string m_unsupported;
};

// The diagnostics of an NVRTC log ("FILE(LINE): error: MESSAGE", the source line, a caret line).
std::vector<CompileDiagnostic> parse_nvrtc_log(std::string_view log);
// "FILE:LINE:COL: error: MESSAGE" with the source line and caret under it, as compilers print them.
std::string format_diagnostics(const std::vector<CompileDiagnostic>& diagnostics);

// Compiles `build`, or returns the cached binary of an identical earlier compile: the key covers the
// source and every file it includes with "...", the embedded attnscope headers, the options, the
// architecture and the NVRTC version. Throws SourceCompileError for a failed compile, PluginError
// when NVRTC cannot be loaded or the source cannot be read.
CompiledSource compile_source(const SourceBuild& build);

// "13.0"; throws PluginError when libnvrtc cannot be loaded (saying where it was looked for).
std::string nvrtc_version();
// The architecture NVRTC compiles for on a device of compute capability major.minor: "sm_90a" on
// Hopper (the `a` features: wgmma, setmaxnreg), "sm_100a" on Blackwell, "sm_86" elsewhere.
std::string nvrtc_arch(int major, int minor);
// Where compiled sources are kept: $ATTNSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/attnscope, else
// ~/.cache/attnscope; then /nvrtc.
std::string kernel_cache_dir();

}  // namespace attn
