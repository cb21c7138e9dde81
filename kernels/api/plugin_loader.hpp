// Kernels from plug-in libraries (include/attnscope/plugin.h): loading, checking every field the
// ABI requires, and registering each kernel so that find_kernel(), planning, the engines and the
// reports treat it as a built-in one.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// A library that cannot be used: the message names the library's path, the symbol or field, and
// what was expected. The CLI exits 2 with it.
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A loaded library or kernel source, as run records name it.
struct PluginInfo {
  std::string path;  // absolute
  std::int64_t size = 0;
  std::string sha256;
  std::string name;                  // the plug-in's own name; "kernel source" for a .cu
  std::vector<std::string> kernels;  // the ids it registered
  std::string kind = "library";      // "library", "source" or "python" (kernels/api/python_entry.hpp)
  // For a kernel source: the compiler and the options every configuration shares (NVRTC 13.0,
  // -arch, -std, ...); each case adds its -DATTN_HEAD_DIM, -DATTN_DTYPE and knob definitions.
  std::vector<std::string> compile;
  // A version of a watched file (the GUI's hot reload): `path` is its snapshot, `watched` the file
  // the user edits, `version` 1, 2, ... in the order the versions were saved; 0 = not watched.
  std::string watched;
  int version = 0;
  // For Python kernels: the interpreter and the libraries they run on ("Python 3.12.3", "torch ...").
  std::vector<std::string> versions;
};

// Loads each library not loaded yet (a path loaded before is skipped), in order; throws PluginError
// for the first that is missing, lacks the entry point, has another ABI version, leaves a required
// field NULL, or declares an id already registered. Nothing of a rejected library is registered.
// A path ending in .cu is a kernel source (kernels/api/source_kernel.hpp): its directives are read
// and its kernel registered; it is compiled when a case needs it.
void load_plugins(const std::vector<std::string>& paths);
// Loads `snapshot`, version `version` of the watched file `watched` (a library or a kernel source):
// its kernels take the place of the previous version's (same ids), which no longer plan or run; its
// entry replaces the previous version's in loaded_plugins(). Throws PluginError as load_plugins()
// does, registering nothing. Call only while nothing plans or runs a case in this process.
const PluginInfo& load_plugin_version(const std::string& snapshot, const std::string& watched, int version);
// Every library loaded in this process, in load order.
const std::vector<PluginInfo>& loaded_plugins();
// Their paths, as workers, plans and resumes load them again.
std::vector<std::string> loaded_plugin_paths();
// The library that registered `kernel_id`, or nullptr for a built-in kernel.
const PluginInfo* plugin_of(std::string_view kernel_id);
// ATTNSCOPE_PLUGIN_PATH split at ':' (empty entries dropped), then `extra` (--plugin), then
// `kernel_sources` (--kernel-source).
std::vector<std::string> plugin_paths(const std::vector<std::string>& extra,
                                      const std::vector<std::string>& kernel_sources = {});

}  // namespace attn
