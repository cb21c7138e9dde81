// Versions of a file being edited (the GUI's hot reload): each saved state of a plug-in library or
// kernel source is copied aside before it is loaded, so a version keeps running the bytes it was
// judged on while the user saves the next one, and records can name exactly what ran.
#pragma once
#include <string>

namespace attn {

struct KernelSnapshot {
  std::string path;    // the copy: <cache>/versions/<stem>-<sha12><ext>
  std::string sha256;  // of the watched file's bytes
};

// Copies the current bytes of `watched` (absolute) into the versions folder beside
// kernel_cache_dir(); the same bytes give the same snapshot. A kernel source's copy starts with an
// `include_dir` directive for the watched file's folder and a `#line 1 "<watched>"`, so its quoted
// includes resolve as before and compile errors point at the file the user edits. Throws
// PluginError naming the file when it cannot be read or the copy cannot be written.
KernelSnapshot snapshot_kernel_file(const std::string& watched);

}  // namespace attn
