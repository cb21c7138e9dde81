// `attnscope worker`: the process a supervisor starts (locally, or through --worker-cmd on another
// host): cases as JSONL on stdin, its device record then one result per case on stdout, logs on
// stderr. One device per worker.
#include <cstdio>
#include <exception>

#include "app/cli/commands.hpp"
#include "app/cli/run_flags.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "profiling/worker/worker_loop.hpp"
#include "reports/worker_json.hpp"

namespace attn::cli {

void add_worker_flags(CLI::App& cmd, WorkerOptions& o) {
  cmd.add_option_function<std::string>(
         "--backend", [&o](const std::string& v) { o.backend = v; },
         "cpu|cuda when stdin brings no setup line (default: cuda where a GPU is usable, else cpu)")
      ->type_name("cpu|cuda");
  cmd.add_option("--device", o.device, "GPU index when stdin brings no setup line (default 0)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  cmd.add_flag("--debug-kernels", o.debug_kernels,
               "register the debug kernels (when stdin brings no setup line)");
  cmd.add_option("--plugin", o.plugins,
                 "load a plug-in library (when stdin brings no setup line); repeatable")
      ->type_name("PATH");
  add_kernel_source_option(cmd, o.kernel_sources,
                           "load a kernel source (when stdin brings no setup line); repeatable");
}

int run_worker_command(const WorkerOptions& options) {
  WorkerSetup defaults;
  defaults.device = options.device;
  defaults.debug_kernels = options.debug_kernels;
  defaults.plugins = plugin_paths(options.plugins, options.kernel_sources);
  if (options.backend) {
    const auto b = parse_backend(*options.backend);
    if (!b) {
      std::fprintf(stderr, "attnscope worker: --backend '%s': expected cpu or cuda\n",
                   options.backend->c_str());
      return kExitBadInput;
    }
    defaults.backend = *b;
  }
  int protocol_out = -1;
  try {
    protocol_out = take_protocol_stdout();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope worker: %s\n", e.what());
    return kExitBadInput;
  }
  const JsonWorkerCodec codec;
  return run_worker(0, protocol_out, codec, defaults, !options.backend, stderr);
}

}  // namespace attn::cli
