// Reading several results files into one ResultSet (see result_set.hpp).
#include "reports/result_set.hpp"

#include <stdexcept>
#include <unordered_map>

#include "reports/jsonl_store.hpp"

namespace attn {

namespace fs = std::filesystem;

fs::path results_file_of(const fs::path& arg) {
  std::error_code ec;
  if (fs::is_directory(arg, ec)) {
    const fs::path file = arg / "results.jsonl";
    if (!fs::is_regular_file(file, ec))
      throw ResultsIoError(arg.string() + ": a directory without results.jsonl (expected a run directory " +
                           "written by `attnscope run`, or a results .jsonl file)");
    return file;
  }
  if (!fs::exists(arg, ec))
    throw ResultsIoError(arg.string() +
                         ": no such file or directory (expected a run directory or a results " +
                         ".jsonl file)");
  return arg;
}

ResultSet load_result_set(const std::vector<std::string>& args) {
  if (args.empty()) throw std::invalid_argument("no results files given");
  ResultSet set;
  // case_id -> where it was first read. The file is kept by value: the source it belongs to is
  // pushed only after its file is read, so an index into `sources` would not exist yet.
  struct FirstSeen {
    fs::path file;
    std::size_t line;
  };
  std::unordered_map<std::string, FirstSeen> seen;
  for (const std::string& arg : args) {
    const fs::path file = results_file_of(arg);
    LoadedRun loaded = read_results(file);  // drops (and warns about) repeats within the file
    for (auto& w : loaded.warnings) set.warnings.push_back(std::move(w));
    ResultSource src{file, std::move(loaded.run), 0};
    // Records written before cases named their device ran on the run's one device.
    const std::string run_device = src.run.gpu ? src.run.gpu->name : src.run.cpu_model;
    for (std::size_t k = 0; k < loaded.cases.size(); ++k) {
      CaseResult& c = loaded.cases[k];
      if (!c.place) c.place.emplace();
      if (c.place->device_name.empty()) c.place->device_name = run_device;
      if (c.place->host.empty()) c.place->host = src.run.host;
      const std::size_t line = k < loaded.case_lines.size() ? loaded.case_lines[k] : 0;
      const auto [it, inserted] = seen.emplace(c.case_id, FirstSeen{file, line});
      if (!inserted) {
        set.warnings.push_back(file.string() + ":" + std::to_string(line) + ": case " + c.case_id + " (" +
                               c.kernel + ") is already in " + it->second.file.string() + ":" +
                               std::to_string(it->second.line) + "; dropped, the first record is kept");
        continue;
      }
      set.cases.push_back(std::move(c));
      ++src.cases;
    }
    set.sources.push_back(std::move(src));
  }
  return set;
}

}  // namespace attn
