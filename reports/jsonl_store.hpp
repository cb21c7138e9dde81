// results.jsonl on disk: a streaming writer (run record first, then one fsync'ed line per case)
// and a reader that tolerates a torn last line left by a killed writer.
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiling/result.hpp"
#include "reports/result_json.hpp"

namespace attn {

// The results file exists and the caller did not ask to overwrite it.
class ResultsExistError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Opening, writing, syncing or reading the file failed at the OS level; names path and errno text.
class ResultsIoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LoadedRun {
  RunInfo run;
  std::vector<CaseResult> cases;
  std::vector<std::size_t> case_lines;  // the 1-based line of each case record, parallel to `cases`
  std::vector<std::string> warnings;    // "file:line: ..." for what was skipped, e.g. a torn last line
};

// One writer per file, used from one thread at a time (the supervisor's result loop).
class JsonlWriter {
 public:
  // Creates the parent directories and the file, and writes `run` as its first line. An existing
  // file throws ResultsExistError unless `force` (then it is truncated). Exclusive creation
  // (O_EXCL) so two runs never interleave into one file.
  static JsonlWriter create(const std::filesystem::path& file, const RunInfo& run, bool force);

  // Reopens an existing results file to append to it (--resume): reads it into `loaded`, cuts a
  // torn last line off the file (it is in loaded.warnings), and positions at the end.
  static JsonlWriter resume(const std::filesystem::path& file, LoadedRun& loaded);

  JsonlWriter(JsonlWriter&& other) noexcept;
  JsonlWriter& operator=(JsonlWriter&& other) noexcept;
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;
  ~JsonlWriter();

  // Writes one case line, then fsyncs: a killed process loses at most the line being written.
  void append(const CaseResult& result);
  // Closes the file; append() afterwards throws. Called by the destructor (which never throws).
  void close();

  const std::filesystem::path& path() const { return m_path; }
  std::size_t lines_written() const { return m_lines; }

 private:
  JsonlWriter(std::filesystem::path path, int fd) : m_path(std::move(path)), m_fd(fd) {}
  void write_line(const std::string& line);

  std::filesystem::path m_path;
  int m_fd = -1;
  std::size_t m_lines = 0;  // lines written by this writer
};

// Replaces the run record (the first non-blank line) of a closed results file with `run`, through a
// temporary file renamed over it, so that a crash leaves either the old or the new file whole.
// The end of a run uses it to add the devices that took part and the time totals.
void rewrite_run_record(const std::filesystem::path& file, const RunInfo& run);

// Reads a whole results file. The first non-blank line must be a run record, every later one a case
// record. An unparsable last line (a writer killed mid-line) is dropped with a warning; an
// unparsable or invalid line anywhere else throws ResultsFormatError naming "file:line". A case_id
// seen on an earlier line is dropped with a warning naming both lines (the first record is kept):
// every reader (report, compare, merge, --resume) then sees each case once.
LoadedRun read_results(const std::filesystem::path& file);

}  // namespace attn
