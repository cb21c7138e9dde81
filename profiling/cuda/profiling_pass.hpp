// The profiling stage, after timing and apart from it: one launch under CUPTI activity for the
// launch statistics, then one metrics launch under the CUPTI range profiler in the case's
// "metrics" NVTX sub-range. What is available (CUPTI, counters, an injected ncu/nsys) is decided
// once, when the stage is built, and said in the run record.
#pragma once
#include <nvtx3/nvToolsExt.h>

#include <functional>
#include <memory>
#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "profiling/cupti/kernel_activity.hpp"
#include "profiling/cupti/range_profiler.hpp"
#include "profiling/metrics.hpp"
#include "profiling/protocol.hpp"
#include "profiling/result.hpp"

namespace attn {

class ProfilingPass {
 public:
  // Throws std::runtime_error on a bad --metrics request. `announce` prints one line to the user.
  ProfilingPass(const Protocol& protocol, nvtxDomainHandle_t nvtx,
                const std::function<void(const std::string&)>& announce);

  // metrics_status/reason, names and passes of the run record.
  void describe(RunInfo& run) const;
  // The tool injected into this process (ncu, nsys, "another profiler"), empty when none.
  const std::string& tool() const { return m_tool; }

  // Fills r.launch, r.metrics, r.metrics_status/reason and r.ncu_command. `reset` restores the
  // state a measured launch starts from (output poisoned, L2 flushed in cold mode) and waits, so
  // CUPTI and ncu measure the same launch from the same state. `written_bytes`: what one run of
  // the case writes (outputs and workspace), which decides the replay under `auto`.
  void run(PreparedKernel& kernel, const AttentionArgs& args, CaseResult& r,
           const std::function<void()>& reset, std::int64_t written_bytes);

 private:
  void metrics_launch(PreparedKernel& kernel, const AttentionArgs& args, cupti::RangeProfiler* profiler,
                      CaseResult& r, const std::function<void()>& reset, bool kernel_replay);

  Protocol m_protocol;
  nvtxDomainHandle_t m_nvtx;
  MetricsRequest m_request;
  std::string m_tool;
  MetricsStatus m_status = MetricsStatus::not_attempted;
  std::string m_reason;
  std::unique_ptr<cupti::KernelActivity> m_activity;
  std::unique_ptr<cupti::RangeProfiler> m_profiler;
};

}  // namespace attn
