// ResultStore: a mutex-protected vector of runs with a generation counter, so the UI copies only
// when something changed.
#include "app/gui/result_store.hpp"

#include <algorithm>

#include "reports/result_set.hpp"

namespace attn::gui {

std::uint64_t ResultStore::add(StoredRun run) {
  std::lock_guard lock(m_mutex);
  run.key = m_next_key++;
  m_runs.push_back(std::move(run));
  ++m_generation;
  return m_runs.back().key;
}

StoredRun* ResultStore::find(std::uint64_t key) {
  for (StoredRun& r : m_runs)
    if (r.key == key) return &r;
  return nullptr;
}

void ResultStore::set_run_info(std::uint64_t key, const RunInfo& info) {
  std::lock_guard lock(m_mutex);
  if (StoredRun* r = find(key)) {
    r->data.run = info;
    if (!info.run_id.empty()) r->label = info.run_id;
    ++m_generation;
  }
}

void ResultStore::set_file(std::uint64_t key, const std::filesystem::path& file) {
  std::lock_guard lock(m_mutex);
  if (StoredRun* r = find(key)) {
    r->file = file;
    ++m_generation;
  }
}

void ResultStore::append(std::uint64_t key, CaseResult result) {
  std::lock_guard lock(m_mutex);
  if (StoredRun* r = find(key)) {
    r->data.cases.push_back(std::move(result));
    ++m_generation;
  }
}

void ResultStore::set_live(std::uint64_t key, bool live) {
  std::lock_guard lock(m_mutex);
  if (StoredRun* r = find(key)) {
    r->live = live;
    ++m_generation;
  }
}

void ResultStore::set_shown(std::uint64_t key, bool shown) {
  std::lock_guard lock(m_mutex);
  if (StoredRun* r = find(key)) {
    r->shown = shown;
    ++m_generation;
  }
}

void ResultStore::remove(std::uint64_t key) {
  std::lock_guard lock(m_mutex);
  const auto it =
      std::remove_if(m_runs.begin(), m_runs.end(), [&](const StoredRun& r) { return r.key == key; });
  if (it != m_runs.end()) {
    m_runs.erase(it, m_runs.end());
    ++m_generation;
  }
}

bool ResultStore::snapshot_if_changed(std::uint64_t& seen, std::vector<StoredRun>& out) const {
  std::lock_guard lock(m_mutex);
  if (seen == m_generation) return false;
  out = m_runs;
  seen = m_generation;
  return true;
}

std::uint64_t ResultStore::generation() const {
  std::lock_guard lock(m_mutex);
  return m_generation;
}

StoredRun load_stored_run(const std::filesystem::path& file_or_dir) {
  StoredRun r;
  r.file = results_file_of(file_or_dir.string());
  r.data = read_results(r.file);
  r.label = r.data.run.run_id.empty() ? r.file.parent_path().filename().string() : r.data.run.run_id;
  r.origin = "opened";
  return r;
}

}  // namespace attn::gui
