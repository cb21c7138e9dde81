// `attnscope worker`'s loop: setup, device record, then one result per case (see worker_loop.hpp).
#include "profiling/worker/worker_loop.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "kernels/api/plugin_loader.hpp"
#include "kernels/api/python_entry.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/worker/pipe_io.hpp"

namespace attn {

namespace {

void say(std::FILE* log, const std::string& text) {
  std::fprintf(log, "attnscope worker[%d]: %s\n", static_cast<int>(::getpid()), text.c_str());
  std::fflush(log);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = s.find(',', start);
    parts.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

}  // namespace

std::string select_cuda_device(int index) {
  if (index < 0) throw std::invalid_argument("device " + std::to_string(index) + ": must be 0 or more");
  std::string value = std::to_string(index);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && *visible) {
    const std::vector<std::string> list = split_commas(visible);
    if (static_cast<std::size_t>(index) >= list.size())
      throw std::invalid_argument("device " + std::to_string(index) + ": CUDA_VISIBLE_DEVICES=" + visible +
                                  " shows this worker " + std::to_string(list.size()) + " device(s)");
    value = list[static_cast<std::size_t>(index)];
  }
  ::setenv("CUDA_VISIBLE_DEVICES", value.c_str(), 1);
  return value;
}

int take_protocol_stdout() {
  const int fd = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) throw std::runtime_error(std::string("dup(stdout): ") + std::strerror(errno));
  if (::dup2(2, 1) < 0)
    throw std::runtime_error(std::string("dup2(stderr, stdout): ") + std::strerror(errno));
  return fd;
}

int run_worker(int in_fd, int out_fd, const WorkerCodec& codec, const WorkerSetup& defaults,
               bool probe_backend, std::FILE* log) {
  // A supervisor that died must not kill us mid-write with SIGPIPE: we notice EPIPE and leave.
  ::signal(SIGPIPE, SIG_IGN);
  LineSplitter lines;
  std::size_t line_no = 0;
  auto next_input = [&]() -> std::optional<WorkerInput> {
    std::optional<std::string> line;
    do {
      line = read_line(in_fd, lines, "worker stdin");
      if (!line) return std::nullopt;
      ++line_no;
    } while (line->find_first_not_of(" \t\r") == std::string::npos);
    try {
      return codec.decode_input(*line);
    } catch (const std::exception& e) {
      throw WorkerProtocolError("stdin line " + std::to_string(line_no) + ": " + e.what());
    }
  };

  WorkerSetup setup = defaults;
  std::optional<Case> pending;
  std::optional<Problem> pending_next;  // the hint that came with it
  bool input_done = false;
  try {
    if (std::optional<WorkerInput> first = next_input()) {
      if (first->setup) setup = *first->setup;
      pending = first->work;
      pending_next = first->next_problem;
      probe_backend = probe_backend && !first->setup;
    } else {
      input_done = true;
    }
    // Probing initialises CUDA on device 0: only when no setup chose the backend (and its device).
    if (probe_backend) setup.backend = cuda_device_available() ? Backend::cuda : Backend::cpu;
  } catch (const std::exception& e) {
    say(log, e.what());
    return kWorkerExitBadInput;
  }

  std::unique_ptr<CaseEngine> engine;
  try {
    if (setup.debug_kernels) register_debug_kernels(setup.backend);
    set_python_kernel_backend(setup.backend);  // Python kernels take this backend's tensors
    load_plugins(setup.plugins);  // the same libraries the supervisor loaded (a PluginError ends the start)
    if (setup.backend == Backend::cuda) {
      const std::string visible = select_cuda_device(setup.device);
      say(log, "device " + std::to_string(setup.device) + " (CUDA_VISIBLE_DEVICES=" + visible + ")");
    }
    engine = make_engine(setup.backend, setup.protocol);
  } catch (const std::exception& e) {
    say(log,
        std::string("cannot start the ") + std::string(to_string(setup.backend)) + " engine: " + e.what());
    return kWorkerExitEngineFailed;
  }

  try {
    RunInfo device;
    device.protocol = setup.protocol;
    engine->describe(device);
    write_all(out_fd, codec.encode_device(device) + "\n", "worker stdout");
    for (;;) {
      if (!pending) {
        if (input_done) return kWorkerExitDone;
        std::optional<WorkerInput> in = next_input();
        if (!in) return kWorkerExitDone;
        if (in->setup)
          throw WorkerProtocolError("stdin line " + std::to_string(line_no) +
                                    ": a setup record may only come first");
        pending = in->work;
        pending_next = in->next_problem;
        if (!pending) continue;
      }
      const Case c = std::move(*pending);
      pending.reset();
      if (pending_next) engine->expect_next(*pending_next);
      pending_next.reset();
      const CaseResult r = engine->run(c);
      write_all(out_fd, codec.encode_result(r) + "\n", "worker stdout");
      if (engine->context_lost()) {
        say(log, "the device context is lost (" + engine->context_lost_reason() +
                     "); exiting so that a fresh worker takes the next case");
        return kWorkerExitContextLost;
      }
    }
  } catch (const WorkerProtocolError& e) {
    say(log, e.what());
    return kWorkerExitBadInput;
  } catch (const PipeError& e) {
    say(log, std::string(e.what()) + (e.peer_closed() ? " (the supervisor has gone)" : ""));
    return kWorkerExitBadInput;
  }
}

}  // namespace attn
