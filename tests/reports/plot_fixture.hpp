// A synthetic H100 run for the plot tests: cudnn.sdpa (the baseline) and fa2.mma over seq 128,
// 256, 512, causal and not, with medians chosen so every TFLOPS and speedup is known, plus a
// skipped case; written with JsonlWriter so the tests read it the way the CLI does.
#pragma once
#include <filesystem>
#include <string>

#include "reports/jsonl_store.hpp"
#include "sample_results.hpp"

namespace attn::test {

// [ms] fa2.mma is 2x faster than cudnn.sdpa without a mask and 3x with causal.
inline double plot_median(const std::string& kernel, std::int64_t seq, bool causal) {
  const double base = 0.001 * static_cast<double>(seq) / 128.0;
  if (kernel == "cudnn.sdpa") return base;
  return causal ? base / 3 : base / 2;
}

inline std::filesystem::path write_plot_fixture(const std::filesystem::path& dir,
                                                const std::string& run_id = "h100-run") {
  std::filesystem::remove_all(dir);
  RunInfo run = full_run();
  run.run_id = run_id;
  JsonlWriter w = JsonlWriter::create(dir / "results.jsonl", run, false);
  for (const char* kernel : {"cudnn.sdpa", "fa2.mma"})
    for (std::int64_t seq : {128, 256, 512})
      for (bool causal : {false, true})
        w.append(ok_case(kernel, small_problem(seq, causal), plot_median(kernel, seq, causal), 1e-6));
  w.append(skipped_case("fa2.mma", small_problem(1024, false), "seq 1024 is over the smem budget"));
  w.close();
  return dir / "results.jsonl";
}

}  // namespace attn::test
