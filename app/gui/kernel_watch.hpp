// Hot reload: the kernel files (plug-in libraries, kernel sources) the GUI watches, and the
// versions each save produced. A save becomes a snapshot (kernels/api/kernel_versions.hpp) once the
// file has stopped changing; GuiState loads it, plans the current sweep for its kernels in the
// background (a kernel source compiles there) and runs it as a run of its own, so every version is
// its own series ("my.kernel@v3") and a broken one never replaces the last good one.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/api/nvrtc_compiler.hpp"

namespace attn::gui {

struct WatchVersion {
  enum class State {
    pending,        // saved; waits for the running job to end
    planning,       // loaded; the sweep is being planned (a kernel source compiles)
    compile_error,  // NVRTC refused it: `diagnostics`
    load_error,     // the library or source could not be loaded or planned: `message`
    running,        // its sweep runs
    done,           // its sweep ended: `ok` cases passed the check, `failed` did not
    superseded,     // a later save came before it ran
  };
  int number = 0;
  std::string sha256;    // of the watched file's bytes
  std::string snapshot;  // the copy that is loaded and run
  State state = State::pending;
  std::string message;
  std::vector<CompileDiagnostic> diagnostics;
  std::uint64_t run_key = 0;  // the result store's run of this version
  std::size_t ok = 0, failed = 0;
};

struct WatchedFile {
  std::string path;  // absolute
  bool source = false;
  std::vector<std::string> kernels;  // ids the last loaded version registered
  std::vector<WatchVersion> versions;
  // What the file looked like at the last poll, and since when it has not changed.
  std::filesystem::file_time_type mtime{};
  std::uintmax_t size = 0;
  std::chrono::steady_clock::time_point still_since{};
  bool changed = false;  // differs from the last snapshot's stat; snapshot once still
};

const char* to_string(WatchVersion::State s);

class KernelWatch {
 public:
  // Starts watching `path` (a .so or .cu): snapshots and loads version 1. False with `error` (the
  // file, what is wrong) when it cannot be loaded; nothing is watched then.
  bool add(const std::string& path, std::string& error);
  // Looks at every file (at most every 0.25 s): a file whose bytes changed and then stayed still
  // for 0.3 s gets a new pending version (a save that leaves the bytes as they were gets none).
  void poll(std::chrono::steady_clock::time_point now);
  std::vector<WatchedFile>& files() { return m_files; }
  const std::vector<WatchedFile>& files() const { return m_files; }
  // The first pending version, with its file; nullptr when none.
  std::pair<WatchedFile*, WatchVersion*> next_pending();

 private:
  std::vector<WatchedFile> m_files;
  std::chrono::steady_clock::time_point m_last_poll{};
};

}  // namespace attn::gui
