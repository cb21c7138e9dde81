// The worker protocol: what a supervisor and an `attnscope worker` say to each other over pipes.
// stdin: an optional setup line, then one case per line. stdout: the worker's device record (a
// `run` record) first, then one `case` result per line. stderr: free-form log.
// The wire format (JSON) lives above profiling/ (reports/worker_json.hpp implements WorkerCodec),
// so this layer moves lines and typed values without knowing their encoding.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "profiling/protocol.hpp"
#include "profiling/result.hpp"
#include "profiling/sweep/sweep_spec.hpp"

namespace attn {

// How a worker runs its cases. The supervisor sends it as the first stdin line; a worker started by
// hand takes it from its flags.
struct WorkerSetup {
  Backend backend = Backend::cpu;
  int device = 0;  // index among the GPUs the worker's host shows it (CUDA_VISIBLE_DEVICES honoured)
  Protocol protocol;
  bool debug_kernels = false;
  std::vector<std::string> plugins;  // plug-in libraries to load before the engine (absolute paths)
};

// One stdin line, decoded: a setup or a case. A case may carry the problem the supervisor expects
// to hand the worker next (when it is another problem): CaseEngine::expect_next's hint.
struct WorkerInput {
  std::optional<WorkerSetup> setup;
  std::optional<Case> work;
  std::optional<Problem> next_problem;
};

// A line that is not valid protocol; the message names the field.
class WorkerProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Encodes and decodes protocol lines (no trailing newline). Decoders throw WorkerProtocolError.
class WorkerCodec {
 public:
  virtual ~WorkerCodec() = default;
  virtual std::string encode_setup(const WorkerSetup& setup) const = 0;
  virtual std::string encode_case(const Case& c, const std::optional<Problem>& next_problem) const = 0;
  virtual WorkerInput decode_input(std::string_view line) const = 0;
  virtual std::string encode_device(const RunInfo& device) const = 0;
  virtual RunInfo decode_device(std::string_view line) const = 0;
  virtual std::string encode_result(const CaseResult& r) const = 0;
  virtual CaseResult decode_result(std::string_view line) const = 0;
};

// Worker exit codes the supervisor tells apart.
inline constexpr int kWorkerExitDone = 0;          // stdin closed, every case answered
inline constexpr int kWorkerExitBadInput = 2;      // a line that is not protocol
inline constexpr int kWorkerExitContextLost = 3;   // a sticky device fault: the case's result was sent
inline constexpr int kWorkerExitEngineFailed = 4;  // the backend could not start (no GPU, bad device)

}  // namespace attn
