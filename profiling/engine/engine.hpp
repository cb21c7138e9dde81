// The case engine: runs one planned case end to end on one backend (inputs, check, timing) and
// returns its result record. One engine per worker; it owns the device state.
#pragma once
#include <memory>
#include <string>

#include "profiling/protocol.hpp"
#include "profiling/result.hpp"
#include "profiling/sweep/sweep_spec.hpp"

namespace attn {

class CaseEngine {
 public:
  virtual ~CaseEngine() = default;
  // Never throws for a case's own failure: that becomes the record's status and reason.
  virtual CaseResult run(const Case& c) = 0;
  // A hint, given before run(): the problem of the case expected after it, when that is another
  // problem. Host-side set-up for it (cuDNN's graph for its error bar) may start while this case
  // runs; a wrong hint costs host time only.
  virtual void expect_next(const Problem& /*next*/) {}
  // After a sticky device fault no further case can run in this process.
  virtual bool context_lost() const { return false; }
  virtual std::string context_lost_reason() const { return {}; }
  // Fills the environment part of the run record (gpu, driver, versions, cpu).
  virtual void describe(RunInfo& run) const = 0;
};

// Throws std::runtime_error with the reason when the backend cannot start (e.g. no GPU).
std::unique_ptr<CaseEngine> make_engine(Backend backend, const Protocol& protocol);

// Whether a CUDA device is usable in this process, and why not.
bool cuda_device_available(std::string* why_not = nullptr);

// A record carrying the case's identity (id, kernel, knobs, variant label, problem, NVTX name) and a
// status; the engines fill in the measurements, the planner's skips and the supervisor's faults use
// it as is.
CaseResult case_record(const Case& c, Status status, std::string reason = {});
// The record of a case the planner marked skipped (status skipped, its reason, derived counts).
CaseResult planned_skip_record(const Case& c);

// Fills a case result's derived fields (flops, min_bytes, tflops, gbps, queries/s, nvtx name).
void fill_derived(CaseResult& r, bool writes_lse);
// "<variant label>/<shape>/<dtype>/<mask>": two variants of one kernel get distinct ranges.
std::string nvtx_range_name(const Case& c);

}  // namespace attn
