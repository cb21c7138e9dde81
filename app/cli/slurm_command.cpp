// `attnscope slurm`: one sweep as a Slurm job array of `run --shard k/N` jobs, one GPU each, and a
// merge job that starts when the array has ended (afterany, so a failed or cancelled shard still
// gets its gaps reported). The run directory holds the whole plan, both batch scripts, the shards'
// run directories, their logs and the merged run.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "app/cli/commands.hpp"
#include "app/cli/sweep_flags.hpp"
#include "profiling/sweep/command_line.hpp"
#include "profiling/sweep/plan.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plan_store.hpp"

namespace attn::cli {

namespace {

namespace fs = std::filesystem;

class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string quote(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:/=+@%") ==
          std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string join_quoted(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + quote(w);
  return out;
}

// A directive value must stay on its #SBATCH line: sbatch stops reading directives at a line that
// is not one, so a newline would silently drop the rest.
void check_directive(const std::string& flag, const std::string& value) {
  if (value.empty() || value.find_first_of("\n\r") != std::string::npos)
    throw BadInput(fmt::format("{} '{}': expected one non-empty line", flag, value));
}

// `sbatch` as given: a path, or a name looked up on PATH (as the shell would).
std::optional<fs::path> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos)
    return ::access(name.c_str(), X_OK) == 0 ? std::optional<fs::path>(name) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

struct Submitted {
  int exit_code = 0;
  std::string output;  // stdout and stderr
};

Submitted run_capture(const std::vector<std::string>& argv) {
  Submitted s;
  std::FILE* pipe = ::popen((join_quoted(argv) + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start " + argv.front());
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) s.output.append(buf, n);
  const int status = ::pclose(pipe);
  s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  while (!s.output.empty() && std::isspace(static_cast<unsigned char>(s.output.back()))) s.output.pop_back();
  return s;
}

// `sbatch --parsable` prints "ID" or "ID;CLUSTER".
std::string job_id_of(const Submitted& s, const std::string& what) {
  const std::string line = s.output.substr(s.output.rfind('\n') + 1);
  const std::string id = line.substr(0, line.find(';'));
  if (s.exit_code != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw BadInput(fmt::format("sbatch did not accept the {} (exit {}): {}", what, s.exit_code, s.output));
  return id;
}

std::string utc_stamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// The #SBATCH lines both jobs share: partition, time, account. --sbatch-arg goes to the shards
// only: memory, constraints or a hold are about the measuring jobs, not the short merge.
std::string common_directives(const SlurmOptions& o) {
  std::string out;
  if (o.partition) out += "#SBATCH --partition=" + *o.partition + "\n";
  if (o.time) out += "#SBATCH --time=" + *o.time + "\n";
  if (o.account) out += "#SBATCH --account=" + *o.account + "\n";
  return out;
}

std::string shard_directives(const SlurmOptions& o) {
  std::string out = common_directives(o);
  for (const std::string& a : o.sbatch_args) out += "#SBATCH " + a + "\n";
  return out;
}

struct Scripts {
  std::string shard, merge;
};

Scripts make_scripts(const SlurmOptions& o, const fs::path& dir, Backend backend, const fs::path& exe) {
  SweepOverrides sweep = o.sweep;
  sweep.backend = std::string(to_string(backend));  // every shard plans for the backend planned here
  sweep.out.reset();                                // each shard writes its own folder, given below
  sweep.force.reset();
  std::vector<std::string> run_args = sweep_args(sweep);
  if (o.case_timeout) run_args.insert(run_args.end(), {"--case-timeout", *o.case_timeout});
  const std::string name = "attnscope-" + dir.filename().string();
  const std::string d = quote(dir.string()), x = quote(exe.string());
  const std::string presets = "export ATTNSCOPE_PRESETS=" + quote(presets_dir()) + "\n";

  Scripts s;
  s.shard = fmt::format(
      "#!/bin/bash\n"
      "# Shard ${{SLURM_ARRAY_TASK_ID}} of {n} of the sweep planned in {dir}/plan.jsonl (attnscope slurm).\n"
      "#SBATCH --job-name={name}\n"
      "#SBATCH --array=1-{n}\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --output={dir}/logs/shard-%a.out\n"
      "{gres}{common}"
      "set -euo pipefail\n"
      "{presets}"
      "k=${{SLURM_ARRAY_TASK_ID}}\n"
      "out={d}/shard-$k\n"
      "# A requeued shard continues where it stopped.\n"
      "if [[ -f $out/results.jsonl ]]; then\n"
      "  exec {x} run --quiet --resume \"$out\"\n"
      "fi\n"
      "exec {x} run --quiet {args} --shard \"$k/{n}\" --out \"$out\"\n",
      fmt::arg("n", o.shards), fmt::arg("dir", dir.string()), fmt::arg("name", name),
      fmt::arg("gres", backend == Backend::cpu ? "" : "#SBATCH --gres=gpu:1\n"),
      fmt::arg("common", shard_directives(o)), fmt::arg("presets", presets), fmt::arg("d", d),
      fmt::arg("x", x), fmt::arg("args", join_quoted(run_args)));
  s.merge = fmt::format(
      "#!/bin/bash\n"
      "# Joins the shards of {dir} into {dir}/merged once the job array has ended (attnscope slurm).\n"
      "#SBATCH --job-name={name}-merge\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --output={dir}/logs/merge.out\n"
      "{common}"
      "set -uo pipefail\n"
      "{presets}"
      "inputs=()\n"
      "for k in $(seq 1 {n}); do\n"
      "  if [[ -f {d}/shard-$k/results.jsonl ]]; then inputs+=({d}/shard-$k); "
      "else echo \"shard $k/{n} wrote no results (see {dir}/logs/shard-$k.out)\" >&2; fi\n"
      "done\n"
      "if (( ${{#inputs[@]}} == 0 )); then echo 'no shard wrote results; nothing to merge' >&2; exit 1; fi\n"
      "exec {x} merge \"${{inputs[@]}}\" --plan {d}/plan.jsonl --out {d}/merged --force\n",
      fmt::arg("n", o.shards), fmt::arg("dir", dir.string()), fmt::arg("name", name),
      fmt::arg("common", common_directives(o)), fmt::arg("presets", presets), fmt::arg("d", d),
      fmt::arg("x", x));
  return s;
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream f(file, std::ios::trunc);
  f << text;
  f.close();
  if (!f) throw std::runtime_error(file.string() + ": cannot write");
}

}  // namespace

void add_slurm_flags(CLI::App& cmd, SlurmOptions& o) {
  add_sweep_flags(cmd, o.sweep);
  // A submitted sweep's directory is never overwritten: its jobs may still be writing there.
  cmd.remove_option(cmd.get_option("--force"));
  cmd.get_option("--out")->description(
      "run directory: plan, scripts, shards, logs and the merged run (default runs/slurm-<UTC time>); "
      "on a file system the compute nodes share");
  cmd.add_option("--shards", o.shards, "jobs in the array: the plan is split into this many shards")
      ->required()
      ->type_name("N")
      ->group("Slurm");
  cmd.add_option("--partition", o.partition, "sbatch --partition of both jobs")
      ->type_name("NAME")
      ->group("Slurm");
  cmd.add_option("--time", o.time, "sbatch --time of both jobs (e.g. 2:00:00)")
      ->type_name("TIME")
      ->group("Slurm");
  cmd.add_option("--account", o.account, "sbatch --account of both jobs")->type_name("NAME")->group("Slurm");
  cmd.add_option("--sbatch-arg", o.sbatch_args,
                 "one more #SBATCH option for the shard jobs, e.g. --sbatch-arg=--qos=high (repeatable)")
      ->type_name("OPT")
      ->allow_extra_args(false)
      ->group("Slurm");
  cmd.add_option("--case-timeout", o.case_timeout, "passed to every shard's `attnscope run`")
      ->type_name("SECONDS")
      ->group("Slurm");
  cmd.add_option("--sbatch", o.sbatch, "the sbatch program (default: sbatch on PATH)")
      ->type_name("PATH")
      ->group("Slurm");
  cmd.add_flag("--dry-run", o.dry_run, "print the plan's size and both scripts; write and submit nothing")
      ->group("Slurm");
}

int submit_slurm(const SlurmOptions& o) {
  try {
    if (o.shards < 1 || o.shards > 10000)
      throw BadInput(fmt::format("--shards {}: expected 1 to 10000 jobs in the array", o.shards));
    if (o.partition) check_directive("--partition", *o.partition);
    if (o.time) check_directive("--time", *o.time);
    if (o.account) check_directive("--account", *o.account);
    for (const std::string& a : o.sbatch_args) {
      check_directive("--sbatch-arg", a);
      if (a.front() != '-')
        throw BadInput(fmt::format("--sbatch-arg '{}': expected an sbatch option such as --qos=high", a));
    }
    std::optional<fs::path> sbatch;
    if (!o.dry_run && !(sbatch = find_program(o.sbatch)))
      throw BadInput(fmt::format(
          "{}: not found{}; run `attnscope slurm` on a host that submits Slurm jobs, pass --sbatch PATH, "
          "or --dry-run to print the scripts",
          o.sbatch, o.sbatch.find('/') == std::string::npos ? " on PATH" : " or not executable"));

    // The plan as `run` makes it, for the backend the shards will use: cuda unless the flags or
    // the preset say otherwise (the planning host need not have a GPU).
    const bool cpu = o.sweep.backend && *o.sweep.backend == "cpu";
    const bool use_default = !o.sweep.preset && !o.sweep.any_axis() && !o.sweep.kernels;
    std::vector<Case> cases;
    Backend backend = Backend::cuda;
    try {
      const SweepSpec spec =
          spec_from_overrides(o.sweep, presets_dir(), use_default ? (cpu ? "cpu-quick" : "quick") : "");
      backend = spec.backend.value_or(Backend::cuda);
      cases = plan(spec, backend);
    } catch (const SpecError& e) {
      throw BadInput(e.what());
    }
    if (cases.empty()) throw BadInput("the sweep plans no cases; nothing to submit");
    // A problem's cases stay in one shard (profiling/worker/shard.hpp), so more shards than problems leaves
    // some empty.
    std::size_t problems = 0;
    for (std::size_t i = 0; i < cases.size(); ++i)
      problems += i == 0 || !(cases[i].problem == cases[i - 1].problem) ? 1 : 0;
    if (static_cast<std::size_t>(o.shards) > problems)
      throw BadInput(
          fmt::format("--shards {}: the plan has {} cases in {} problems, and a problem's cases "
                      "run in one shard; use at most {} shards",
                      o.shards, cases.size(), problems, problems));

    const fs::path dir =
        fs::absolute(o.sweep.out ? fs::path(*o.sweep.out) : fs::path("runs") / ("slurm-" + utc_stamp()))
            .lexically_normal();
    if (fs::exists(dir / "plan.jsonl"))
      throw BadInput(
          fmt::format("--out {}: already holds a submitted sweep (plan.jsonl); choose a new --out, "
                      "or continue that one with attnscope run --resume {}/merged",
                      dir.string(), dir.string()));
    const fs::path exe = fs::read_symlink("/proc/self/exe");
    // The default preset by name, so a shard does not pick its own from what its host has.
    SlurmOptions named = o;
    if (use_default) named.sweep.preset = cpu ? "cpu-quick" : "quick";
    const Scripts scripts = make_scripts(named, dir, backend, exe);

    if (o.dry_run) {
      std::printf("# %zu cases on %s in %d shards -> %s (dry run: nothing written or submitted)\n",
                  cases.size(), std::string(to_string(backend)).c_str(), o.shards, dir.c_str());
      std::printf("# ---- %s/shard.sbatch\n%s# ---- %s/merge.sbatch\n%s", dir.c_str(), scripts.shard.c_str(),
                  dir.c_str(), scripts.merge.c_str());
      return kExitOk;
    }

    try {
      fs::create_directories(dir / "logs");
      PlanFile whole;
      whole.backend = backend;
      whole.plan_cases = cases.size();
      whole.cases = cases;
      for (std::size_t i = 0; i < cases.size(); ++i) whole.plan_index.push_back(i);
      write_plan(dir / "plan.jsonl", whole);
      write_text(dir / "shard.sbatch", scripts.shard);
      write_text(dir / "merge.sbatch", scripts.merge);
    } catch (const std::exception& e) {
      throw BadInput(fmt::format("--out {}: {}", dir.string(), e.what()));
    }

    const std::string array_id = job_id_of(
        run_capture({sbatch->string(), "--parsable", (dir / "shard.sbatch").string()}), "job array");
    std::string merge_id;
    try {
      merge_id = job_id_of(run_capture({sbatch->string(), "--parsable", "--dependency=afterany:" + array_id,
                                        (dir / "merge.sbatch").string()}),
                           "merge job");
    } catch (const BadInput& e) {
      throw BadInput(
          fmt::format("{}\nthe job array {} is submitted; once the issue is fixed, submit the merge "
                      "with: sbatch --dependency=afterany:{} {}",
                      e.what(), array_id, array_id, (dir / "merge.sbatch").string()));
    }
    std::printf(
        "submitted job array %s (%d shards, %zu cases on %s) and merge job %s (after the array ends)\n",
        array_id.c_str(), o.shards, cases.size(), std::string(to_string(backend)).c_str(), merge_id.c_str());
    std::printf("shards:  %s/shard-<k> (logs %s/logs/shard-<k>.out)\n", dir.c_str(), dir.c_str());
    std::printf("merged:  %s/merged (log %s/logs/merge.out)\n", dir.c_str(), dir.c_str());
    std::printf("watch:   squeue -j %s,%s\n", array_id.c_str(), merge_id.c_str());
    std::printf("missing cases after the merge: attnscope run --resume %s/merged\n", dir.c_str());
    write_text(dir / "jobs.txt", fmt::format("array {}\nmerge {}\n", array_id, merge_id));
    return kExitOk;
  } catch (const BadInput& e) {
    std::fprintf(stderr, "attnscope slurm: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope slurm: %s\n", e.what());
    return kExitCaseFailed;
  }
}

}  // namespace attn::cli
