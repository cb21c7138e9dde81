// The worker slots of a run: one per (worker command, device), the same for the CLI's --worker-cmd
// and --devices and the GUI's worker list, so both start workers the same way.
#pragma once
#include <string>
#include <vector>

#include "profiling/worker/supervisor.hpp"

namespace attn {

// `commands`: shell commands that run `attnscope worker` (ssh, srun...); an empty string stands for
// `local` run directly (`attnscope worker`, or the Python worker when Python kernels take part). Each command
// x each device is one slot, labelled "w<i> (device <d>[ via '<command>'])", with ATTNSCOPE_WORKER_DEVICE=<d>
// in its environment and `setup` (device set) as its first stdin line. Throws SpecError naming `flag` for a
// command that is only blanks.
std::vector<WorkerSlot> make_worker_slots(const std::vector<std::string>& commands,
                                          const std::vector<int>& devices, const SpawnSpec& local,
                                          const WorkerSetup& setup, const char* flag = "--worker-cmd");

}  // namespace attn
