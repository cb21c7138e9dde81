// The isolation flags of `run` (see isolation_flags.hpp).
#include "app/cli/isolation_flags.hpp"

#include <fmt/format.h>

namespace attn::cli {

namespace {
constexpr const char* kGroup = "Isolation";

void text_option(CLI::App& cmd, const std::string& name, std::optional<std::string>& slot,
                 const std::string& type, const std::string& help) {
  cmd.add_option_function<std::string>(
         name, [&slot](const std::string& v) { slot = v; }, help)
      ->type_name(type)
      ->group(kGroup);
}
}  // namespace

void add_isolation_flags(CLI::App& cmd, IsolationOptions& o) {
  cmd.add_flag(
         "--in-process", o.in_process,
         "run cases in this process instead of in worker processes (for debugging: a faulting or hanging "
         "kernel then ends or stalls the run)")
      ->group(kGroup);
  text_option(
      cmd, "--case-timeout", o.case_timeout, "SECONDS",
      fmt::format("a case without a result after this long is recorded as `timeout` and its worker is "
                  "killed and replaced (default {:g})",
                  kDefaultCaseTimeout_s));
  text_option(cmd, "--worker-start-timeout", o.worker_start_timeout, "SECONDS",
              fmt::format("a worker (or --worker-cmd command) that has not answered the handshake with its "
                          "device record after this long is killed; its start failed (default {:g})",
                          kDefaultWorkerStartTimeout_s));
  text_option(
      cmd, "--resume", o.resume, "DIR",
      "continue an interrupted run in DIR: finished cases are skipped, a torn last line is dropped; with "
      "no sweep flags the stored plan (DIR/plan.jsonl) is used, with them they must give the same plan");
  text_option(
      cmd, "--devices", o.devices, "all|LIST",
      "one worker per listed GPU (e.g. 0,2), cases handed out as workers free up; all = every GPU this "
      "host sees (default 0)");
  cmd.add_option(
         "--worker-cmd", o.worker_cmds,
         "start workers through this shell command instead of this attnscope, e.g. 'ssh gpu7 attnscope "
         "worker' or 'srun --gpus=1 attnscope worker'; it gets ATTNSCOPE_WORKER_DEVICE and the setup on "
         "stdin; repeat for more hosts (each command x each --devices entry is one worker); '' = this "
         "attnscope")
      ->type_name("CMD")
      ->group(kGroup)
      ->allow_extra_args(false);
  text_option(
      cmd, "--shard", o.shard, "k/n",
      "run only shard k of n (1 <= k <= n) of the plan, for job arrays; whole problems go round-robin "
      "to shards; `attnscope merge` joins the shard directories");
  cmd.add_flag(
         "--debug-kernels", o.debug_kernels,
         "register debug.fault, debug.hang, debug.oom and debug.wrong (of the --backend in use) to test "
         "isolation")
      ->group(kGroup);
}

}  // namespace attn::cli
