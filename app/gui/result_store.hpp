// The GUI's result store: every run on screen (opened files, a live sweep, a replay), filled by
// background threads and read by the UI through one coarse lock per frame (snapshot_if_changed).
#pragma once
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "profiling/result.hpp"
#include "reports/jsonl_store.hpp"

namespace attn::gui {

struct StoredRun {
  std::uint64_t key = 0;       // stable handle while the run is in the store
  std::string label;           // the run id; series of several runs start with it
  std::filesystem::path file;  // where the results live on disk (empty while nothing is written)
  LoadedRun data;              // run record and cases, in arrival order
  bool live = false;           // a sweep or replay is still adding cases
  bool shown = true;           // plotted and listed (the user can hide a run without closing it)
  std::string origin;          // "opened", "sweep" or "replay"
};

class ResultStore {
 public:
  // Adds a run and returns its key.
  std::uint64_t add(StoredRun run);
  void set_run_info(std::uint64_t key, const RunInfo& info);
  void set_file(std::uint64_t key, const std::filesystem::path& file);
  void append(std::uint64_t key, CaseResult result);
  void set_live(std::uint64_t key, bool live);
  void set_shown(std::uint64_t key, bool shown);
  void remove(std::uint64_t key);

  // Copies the runs into `out` when anything changed since generation `seen` (then updated);
  // returns whether it copied. The UI calls this once per frame: its only lock on the store.
  bool snapshot_if_changed(std::uint64_t& seen, std::vector<StoredRun>& out) const;
  std::uint64_t generation() const;

 private:
  StoredRun* find(std::uint64_t key);
  mutable std::mutex m_mutex;
  std::vector<StoredRun> m_runs;
  std::uint64_t m_next_key = 1;
  std::uint64_t m_generation = 1;
};

// Reads a results file (or a run directory holding results.jsonl) into a StoredRun; throws the
// reader's ResultsIoError / ResultsFormatError.
StoredRun load_stored_run(const std::filesystem::path& file_or_dir);

}  // namespace attn::gui
