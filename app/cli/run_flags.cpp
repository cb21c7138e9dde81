// add_run_flags and its inverse, run_args (run_flags.hpp).
#include "app/cli/run_flags.hpp"

#include "app/cli/sweep_flags.hpp"
#include "kernels/api/source_kernel.hpp"
#include "profiling/sweep/command_line.hpp"

namespace attn::cli {

void add_run_flags(CLI::App& cmd, RunOptions& o) {
  add_sweep_flags(cmd, o.sweep);
  cmd.add_flag("--quiet", o.quiet, "No progress output; the summary still prints");
  cmd.add_flag(
      "--plan-only", o.plan_only,
      "write the plan (OUT/plan.jsonl: every case in run order, with its skip reason) and exit without "
      "starting a worker");
  cmd.add_flag("--report", o.report,
               "When the sweep ends, write report.md and its figures (PNG and SVG) into the run directory");
  add_isolation_flags(cmd, o.isolation);
  cmd.add_option("--plugin", o.plugins,
                 "load kernels from a plug-in library (include/attnscope/plugin.h; docs/plugins.md); "
                 "repeatable, after those in ATTNSCOPE_PLUGIN_PATH (':'-separated); workers load the same")
      ->type_name("PATH")
      ->group("Sweep");
  add_kernel_source_option(
      cmd, o.kernel_sources,
      "compile a CUDA kernel source with NVRTC and sweep its kernel "
      "(include/attnscope/kernel_source.h; docs/plugins.md); repeatable; workers load the same")
      ->group("Sweep");
  add_python_kernel_option(cmd, o.python_kernels,
                           "sweep a Python callable fn(q, k, v, *, causal, window, scale, out=None) -> o "
                           "(docs/python.md), or a built-in adapter (torch.flash, torch.flex, ...); "
                           "repeatable; its cases run in Python workers")
      ->group("Sweep");
}

CLI::Option* add_python_kernel_option(CLI::App& cmd, std::vector<std::string>& into,
                                      const std::string& help) {
  return cmd.add_option("--python-kernel", into, help)->type_name("FILE.py:FUNC[=ID]");
}

CLI::Option* add_kernel_source_option(CLI::App& cmd, std::vector<std::string>& into,
                                      const std::string& help) {
  return cmd.add_option("--kernel-source", into, help)
      ->type_name("FILE.cu")
      ->check(
          [](const std::string& v) -> std::string {
            if (is_kernel_source(v)) return {};
            return "'" + v + "': expected a .cu file written to include/attnscope/kernel_source.h";
          },
          "FILE.cu");
}

std::vector<std::string> run_args(const RunOptions& o) {
  std::vector<std::string> args{"run"};
  for (std::string& a : sweep_args(o.sweep)) args.push_back(std::move(a));
  auto add = [&](const char* flag, const std::optional<std::string>& v) {
    if (!v) return;
    args.emplace_back(flag);
    args.push_back(*v);
  };
  const IsolationOptions& iso = o.isolation;
  if (iso.in_process) args.emplace_back("--in-process");
  add("--case-timeout", iso.case_timeout);
  add("--worker-start-timeout", iso.worker_start_timeout);
  add("--resume", iso.resume);
  add("--devices", iso.devices);
  for (const std::string& c : iso.worker_cmds) {
    args.emplace_back("--worker-cmd");
    args.push_back(c);
  }
  add("--shard", iso.shard);
  if (iso.debug_kernels) args.emplace_back("--debug-kernels");
  if (o.quiet) args.emplace_back("--quiet");
  if (o.plan_only) args.emplace_back("--plan-only");
  if (o.report) args.emplace_back("--report");
  for (const std::string& p : o.plugins) {
    args.emplace_back("--plugin");
    args.push_back(p);
  }
  for (const std::string& p : o.kernel_sources) {
    args.emplace_back("--kernel-source");
    args.push_back(p);
  }
  for (const std::string& p : o.python_kernels) {
    args.emplace_back("--python-kernel");
    args.push_back(p);
  }
  return args;
}

std::string run_command_line(const std::string& exe, const RunOptions& o) {
  std::vector<std::string> argv{exe};
  for (std::string& a : run_args(o)) argv.push_back(std::move(a));
  return join_command_line(argv);
}

}  // namespace attn::cli
