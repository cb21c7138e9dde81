// Several results files read as one set of cases: a run directory or a .jsonl file per argument
// (shards of one run, external baselines such as tools/torch_sdpa.py's), for report, compare
// and crossover. The first file's run record describes the run; the others are listed as sources.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "profiling/result.hpp"

namespace attn {

struct ResultSource {
  std::filesystem::path file;  // the results.jsonl that was read
  RunInfo run;
  std::size_t cases = 0;  // case records this file contributed (duplicates excluded)
};

struct ResultSet {
  std::vector<ResultSource> sources;  // in argument order; sources[0] is the primary run
  std::vector<CaseResult> cases;      // every file's cases, in file order
  std::vector<std::string> warnings;  // torn last lines, duplicate case ids (first kept)

  const RunInfo& primary() const { return sources.front().run; }
};

// `arg` names a run directory (its results.jsonl is read) or a results file. Throws
// ResultsIoError when neither exists (the message says which paths were tried).
std::filesystem::path results_file_of(const std::filesystem::path& arg);

// Reads every argument in order (see results_file_of); a case_id already read (earlier in the same
// file, or from an earlier file) is dropped with a warning naming both file:line places. Throws
// ResultsIoError / ResultsFormatError (from read_results) and std::invalid_argument when `args` is empty.
ResultSet load_result_set(const std::vector<std::string>& args);

}  // namespace attn
