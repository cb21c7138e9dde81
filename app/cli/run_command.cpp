// `attnscope run`: spec -> plan -> engine -> streamed results.jsonl, results.csv and a summary.
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/progress.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/engine/sampler.hpp"
#include "profiling/sweep/plan.hpp"
#include "reports/csv_writer.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/summary_table.hpp"
#include "reports/text_format.hpp"

namespace attn::cli {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_sigint(int) { g_interrupted = 1; }

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

Backend pick_backend(const SweepSpec& spec) {
  if (spec.backend) return *spec.backend;
  return cuda_device_available() ? Backend::cuda : Backend::cpu;
}

}  // namespace

std::string presets_dir() {
  if (const char* env = std::getenv("ATTNSCOPE_PRESETS")) return env;
  return std::string(ATTNSCOPE_SOURCE_DIR) + "/assets/presets";
}

int run_sweep(const RunOptions& options) {
  SweepSpec spec;
  std::vector<Case> cases;
  Backend backend = Backend::cpu;
  try {
    // Without --preset and without axis flags: the default sweep of the backend in use.
    const bool gpu = cuda_device_available();
    const bool cpu_requested = options.sweep.backend && *options.sweep.backend == "cpu";
    const char* fallback = gpu && !cpu_requested ? "quick" : "cpu-quick";
    const bool use_default = !options.sweep.preset && !options.sweep.any_axis() && !options.sweep.kernels;
    spec = spec_from_overrides(options.sweep, presets_dir(), use_default ? fallback : "");
    backend = pick_backend(spec);
    cases = plan(spec, backend);
  } catch (const SpecError& e) {
    std::fprintf(stderr, "attnscope run: %s\n", e.what());
    return kExitBadInput;
  }

  std::unique_ptr<CaseEngine> engine;
  try {
    engine = make_engine(backend, spec.protocol);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope run: %s\n", e.what());
    return kExitBadInput;
  }

  RunInfo run;
  run.run_id = utc_now("%Y%m%d-%H%M%S") + (spec.name.empty() ? "" : "-" + spec.name);
  run.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  run.version = ATTNSCOPE_VERSION;
  run.git_commit = ATTNSCOPE_GIT_COMMIT;
  run.command_line = options.command_line;
  run.protocol = spec.protocol;
  run.baseline = spec.baseline;
  engine->describe(run);

  const std::filesystem::path out_dir = spec.out_dir.empty() ? std::filesystem::path("runs") / run.run_id
                                                              : std::filesystem::path(spec.out_dir);
  std::optional<JsonlWriter> writer;
  try {
    writer.emplace(JsonlWriter::create(out_dir / "results.jsonl", run, spec.force));
  } catch (const ResultsExistError& e) {
    std::fprintf(stderr, "attnscope run: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope run: cannot write results: %s\n", e.what());
    return kExitBadInput;
  }

  std::size_t skipped_at_plan = 0;
  for (const Case& c : cases) skipped_at_plan += c.skip_reason.empty() ? 0 : 1;
  std::fprintf(stderr, "attnscope run: %zu cases (%zu skipped at planning) on %s%s -> %s\n", cases.size(),
               skipped_at_plan, std::string(to_string(backend)).c_str(),
               run.gpu ? (" (" + run.gpu->name + ")").c_str() : "", out_dir.c_str());

  g_interrupted = 0;
  auto previous = std::signal(SIGINT, on_sigint);
  std::vector<CaseResult> results;
  results.reserve(cases.size());
  std::optional<ProgressReporter> progress;
  if (!options.quiet) progress.emplace(stderr, cases.size(), stderr_is_terminal());
  int exit_code = kExitOk;
  for (std::size_t i = 0; i < cases.size() && !g_interrupted; ++i) {
    const Case& c = cases[i];
    if (progress) progress->begin_case(i, c.kernel + " " + config_label(c.problem, c.knobs));
    CaseResult r;
    if (!c.skip_reason.empty()) {
      r.case_id = c.case_id;
      r.kernel = c.kernel;
      r.knobs = c.knobs;
      r.problem = c.problem;
      r.status = Status::skipped;
      r.reason = c.skip_reason;
      r.nvtx_range = nvtx_range_name(c);
      fill_derived(r, false);
    } else {
      r = engine->run(c);
    }
    writer->append(r);
    if (progress) progress->end_case(r);
    if (r.status == Status::mismatch || r.status == Status::fault || r.status == Status::error)
      exit_code = kExitCaseFailed;
    results.push_back(std::move(r));
    if (engine->context_lost()) {
      std::fprintf(stderr,
                   "\nattnscope run: the CUDA context was lost (%s); the %zu remaining cases are not run. "
                   "Results so far are in %s.\n",
                   engine->context_lost_reason().c_str(), cases.size() - i - 1, out_dir.c_str());
      break;
    }
  }
  if (progress) progress->finish();
  std::signal(SIGINT, previous);
  writer->close();
  if (g_interrupted)
    std::fprintf(stderr, "attnscope run: interrupted after %zu of %zu cases; results so far are kept\n",
                 results.size(), cases.size());

  try {
    write_results_csv(out_dir / "results.csv", results);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope run: cannot write results.csv: %s\n", e.what());
    exit_code = kExitCaseFailed;
  }
  std::fputs(format_summary(results, spec.baseline).c_str(), stdout);
  std::printf("results: %s\n         %s\n", (out_dir / "results.jsonl").c_str(), (out_dir / "results.csv").c_str());
  return g_interrupted ? 130 : exit_code;
}

}  // namespace attn::cli
