// The watched kernel files (kernel_watch.hpp).
#include "app/gui/kernel_watch.hpp"

#include <algorithm>

#include "kernels/api/kernel_versions.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "kernels/api/source_kernel.hpp"

namespace attn::gui {

namespace fs = std::filesystem;

const char* to_string(WatchVersion::State s) {
  switch (s) {
    case WatchVersion::State::pending:
      return "waiting";
    case WatchVersion::State::planning:
      return "planning";
    case WatchVersion::State::compile_error:
      return "compile error";
    case WatchVersion::State::load_error:
      return "not loaded";
    case WatchVersion::State::running:
      return "running";
    case WatchVersion::State::done:
      return "done";
    case WatchVersion::State::superseded:
      return "superseded";
  }
  return "?";
}

bool KernelWatch::add(const std::string& given, std::string& error) {
  std::error_code ec;
  const std::string path = fs::absolute(given, ec).lexically_normal().string();
  if (std::any_of(m_files.begin(), m_files.end(), [&](const WatchedFile& f) { return f.path == path; })) {
    error = path + ": already watched";
    return false;
  }
  if (!fs::is_regular_file(path, ec)) {
    error = path + ": no such file; expected a plug-in library (.so) or a kernel source (.cu)";
    return false;
  }
  WatchedFile f;
  f.path = path;
  f.source = is_kernel_source(path);
  f.mtime = fs::last_write_time(path, ec);
  f.size = fs::file_size(path, ec);
  WatchVersion v;
  v.number = 1;
  try {
    const KernelSnapshot snap = snapshot_kernel_file(path);
    v.sha256 = snap.sha256;
    v.snapshot = snap.path;
    f.kernels = load_plugin_version(snap.path, path, 1).kernels;
  } catch (const PluginError& e) {
    error = e.what();
    return false;
  }
  // Version 1 is what the next sweep of the form runs; it has no run of its own.
  v.state = WatchVersion::State::done;
  v.message = "loaded; runs with the next sweep";
  f.versions.push_back(std::move(v));
  m_files.push_back(std::move(f));
  return true;
}

void KernelWatch::poll(std::chrono::steady_clock::time_point now) {
  using namespace std::chrono_literals;
  if (now - m_last_poll < 250ms) return;
  m_last_poll = now;
  for (WatchedFile& f : m_files) {
    std::error_code ec;
    const auto mtime = fs::last_write_time(f.path, ec);
    if (ec) continue;  // mid-save (deleted and re-created): look again next time
    const auto size = fs::file_size(f.path, ec);
    if (ec) continue;
    if (mtime != f.mtime || size != f.size) {
      f.mtime = mtime, f.size = size;
      f.changed = true;
      f.still_since = now;
      continue;
    }
    if (!f.changed || now - f.still_since < 300ms) continue;
    f.changed = false;
    WatchVersion v;
    try {
      const KernelSnapshot snap = snapshot_kernel_file(f.path);
      if (!f.versions.empty() && f.versions.back().sha256 == snap.sha256) continue;  // same bytes
      v.sha256 = snap.sha256;
      v.snapshot = snap.path;
    } catch (const PluginError& e) {
      v.state = WatchVersion::State::load_error;
      v.message = e.what();
    }
    v.number = f.versions.empty() ? 1 : f.versions.back().number + 1;
    f.versions.push_back(std::move(v));
  }
}

std::pair<WatchedFile*, WatchVersion*> KernelWatch::next_pending() {
  for (WatchedFile& f : m_files)
    for (WatchVersion& v : f.versions)
      if (v.state == WatchVersion::State::pending) return {&f, &v};
  return {nullptr, nullptr};
}

}  // namespace attn::gui
