// make_worker_slots (worker_slots.hpp).
#include "profiling/worker/worker_slots.hpp"

#include <fmt/format.h>

#include "profiling/sweep/sweep_spec.hpp"

namespace attn {

std::vector<WorkerSlot> make_worker_slots(const std::vector<std::string>& commands,
                                          const std::vector<int>& devices, const SpawnSpec& local,
                                          const WorkerSetup& setup, const char* flag) {
  std::vector<std::string> cmds = commands;
  if (cmds.empty()) cmds.emplace_back();  // this executable
  std::vector<WorkerSlot> slots;
  for (const std::string& cmd : cmds) {
    if (!cmd.empty() && cmd.find_first_not_of(" \t") == std::string::npos)
      throw SpecError(
          fmt::format("{} '{}': expected a shell command that runs `attnscope worker`", flag, cmd));
    for (int d : devices) {
      WorkerSlot s;
      if (cmd.empty())
        s.launch = local;
      else
        s.launch.shell_command = cmd;
      s.launch.env.emplace_back("ATTNSCOPE_WORKER_DEVICE", std::to_string(d));
      s.setup = setup;
      s.setup.device = d;
      s.label = fmt::format("w{} (device {}{})", slots.size(), d, cmd.empty() ? "" : " via '" + cmd + "'");
      slots.push_back(std::move(s));
    }
  }
  return slots;
}

}  // namespace attn
