// The worker side of the protocol (`attnscope worker`): one engine on one device, cases in on
// stdin, results out on stdout, one line each, until stdin closes or the device is lost.
#pragma once
#include <cstdio>
#include <string>

#include "profiling/worker/protocol.hpp"

namespace attn {

// Runs the protocol on `in_fd`/`out_fd` and returns the process exit code (kWorkerExit*). The
// setup is `defaults` unless the first input line is a setup record; without one and with
// `probe_backend`, the backend is cuda where a GPU is usable, else cpu. Writes its device record
// before anything else, then answers every case with exactly one result line. After a sticky
// device fault (CaseEngine::context_lost) it sends that case's `fault` result and returns
// kWorkerExitContextLost: only a new process gets a working context. Logs go to `log`.
int run_worker(int in_fd, int out_fd, const WorkerCodec& codec, const WorkerSetup& defaults,
               bool probe_backend, std::FILE* log);

// Moves stdout out of the way of kernels and libraries that print: returns a private duplicate
// of fd 1 for the protocol and points fd 1 at stderr. Throws std::runtime_error when dup fails.
int take_protocol_stdout();

// Restricts the CUDA runtime of this process to device `index` of those it would see (the
// index-th entry of CUDA_VISIBLE_DEVICES when that is set). Must run before the first CUDA call.
// Returns the CUDA_VISIBLE_DEVICES value set; throws std::invalid_argument naming the device when
// the index is outside an existing CUDA_VISIBLE_DEVICES list.
std::string select_cuda_device(int index);

}  // namespace attn
