// Launch statistics and the CUPTI metrics launch of a case (see profiling_pass.hpp).
#include "profiling/cuda/profiling_pass.hpp"

#include <cupti_result.h>
#include <fmt/format.h>
#include <unistd.h>

#include <climits>

#include "profiling/cuda/cuda_status.hpp"
#include "profiling/cuda/nvtx_range.hpp"
#include "profiling/engine/sampler.hpp"
#include "profiling/engine/stage_trace.hpp"

namespace attn {

namespace {
std::string self_exe() {
  char buf[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("attnscope");
}
}  // namespace

ProfilingPass::ProfilingPass(const Protocol& protocol, nvtxDomainHandle_t nvtx,
                             const std::function<void(const std::string&)>& announce)
    : m_protocol(protocol), m_nvtx(nvtx) {
  std::string problem;
  if (!parse_metrics_request(m_protocol.metrics, m_request, problem))
    throw std::runtime_error("--metrics '" + m_protocol.metrics + "': " + problem +
                             "; allowed: " + kMetricsRequestAllowed);
  m_tool = injected_profiler();
  if (!m_tool.empty()) {
    m_status = MetricsStatus::unavailable;
    m_reason = "running under " + m_tool +
               ", which owns the GPU's counters: take the metrics from its report (each case's "
               "ncu_command selects that case's metrics launch by NVTX range)";
    announce("CUPTI metrics and launch statistics off: " + m_reason + "; timing goes on");
    return;
  }
  cudaDeviceProp prop{};
  ATTN_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  SmLimits limits;
  limits.max_warps = prop.maxThreadsPerMultiProcessor / 32;
  limits.max_blocks = prop.maxBlocksPerMultiProcessor;
  limits.regs_per_sm = prop.regsPerMultiprocessor;
  limits.smem_per_sm = static_cast<std::int64_t>(prop.sharedMemPerMultiprocessor);
  limits.reserved_smem_per_block = static_cast<std::int64_t>(prop.reservedSharedMemPerBlock);
  std::string why;
  m_activity = cupti::KernelActivity::create(limits, why);
  if (!m_activity) announce("launch statistics unavailable: " + why);
  if (!m_request.enabled) {
    m_status = MetricsStatus::off;
    m_reason = "--metrics none";
    return;
  }
  int code = 0;
  try {
    m_profiler = cupti::RangeProfiler::create(m_request.names, why, &code);
  } catch (const cupti::MetricsError& e) {
    throw std::runtime_error(std::string("--metrics: ") + e.what());
  }
  if (!m_profiler &&
      (code == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || code == CUPTI_ERROR_HARDWARE_BUSY)) {
    // A tool this process did not recognise holds the counters: behave as under ncu, so its
    // NVTX filter still finds each case's metrics launch.
    m_tool = "another profiler";
    m_activity.reset();
  }
  if (!m_profiler) {
    m_status = MetricsStatus::unavailable;
    m_reason = why;
    announce("CUPTI metrics unavailable: " + why + "; timing goes on");
    return;
  }
  m_status = MetricsStatus::ok;
}

void ProfilingPass::describe(RunInfo& run) const {
  run.metrics_status = m_status;
  run.metrics_reason = m_reason;
  if (m_profiler) {
    run.metrics_names = m_profiler->names();
    run.metrics_passes = m_profiler->passes();
  }
}

// Inside the case's NVTX range: one run under CUPTI activity for the launch statistics, then the
// metrics launch in the "metrics" sub-range.
void ProfilingPass::run(PreparedKernel& kernel, const AttentionArgs& args, CaseResult& r,
                        const std::function<void()>& reset, std::int64_t written_bytes) {
  NvtxRange range(m_nvtx, r.nvtx_range);
  if (m_activity) {
    const StageTrace trace("metrics.launch_stats");
    try {
      m_activity->begin();
      kernel.run(args);
      ATTN_CUDA_CHECK(cudaGetLastError());
      r.launch = m_activity->end();
    } catch (const CudaError&) {
      throw;
    } catch (const std::exception& e) {
      r.launch.clear();
      r.metrics_reason = std::string("launch statistics failed: ") + e.what();
    }
  }
  r.metrics_status = m_status;
  if (m_status != MetricsStatus::ok) {
    if (m_status == MetricsStatus::unavailable)
      r.metrics_reason = "unavailable in this run (see the run record's metrics_reason)";
    if (m_status == MetricsStatus::off) r.metrics_reason = "--metrics none";
    if (!m_tool.empty()) metrics_launch(kernel, args, nullptr, r, reset, false);  // the launch ncu selects
    return;
  }
  r.ncu_command =
      ncu_command_for(self_exe(), variant_label(r), r.problem, m_protocol, m_profiler->names(), r.nvtx_range);
  const MetricsReplay replay = m_protocol.metrics_replay;
  const bool kernel_replay = replay == MetricsReplay::kernel ||
                             (replay == MetricsReplay::automatic && written_bytes <= kAutoKernelReplayBytes);
  metrics_launch(kernel, args, m_profiler.get(), r, reset, kernel_replay);
}

void ProfilingPass::metrics_launch(PreparedKernel& kernel, const AttentionArgs& args,
                                   cupti::RangeProfiler* profiler, CaseResult& r,
                                   const std::function<void()>& reset, bool kernel_replay) {
  const auto stream = static_cast<cudaStream_t>(args.stream);
  const double t0 = monotonic_seconds();
  if (!profiler) {
    reset();
    NvtxRange sub(m_nvtx, std::string(kNvtxMetricsRange));
    kernel.run(args);
    ATTN_CUDA_CHECK(cudaGetLastError());
    ATTN_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  // Launch statistics say how many kernels one run launches; without them, room for many.
  const std::size_t expected = r.launch.size();
  std::vector<std::map<std::string, double>> rows;
  try {
    // Every pass starts from the state a timed launch starts from (reset, outside the ranges).
    NvtxRange sub(m_nvtx, std::string(kNvtxMetricsRange));
    rows = profiler->collect(
        [&] {
          kernel.run(args);
          ATTN_CUDA_CHECK(cudaGetLastError());
        },
        expected > 0 ? expected : 256, kernel_replay, reset);
  } catch (const cupti::MetricsError& e) {
    r.metrics_status = MetricsStatus::failed;
    r.metrics_reason = e.what();
    return;
  }
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (expected > 0 && rows.size() != expected) {
    r.metrics_status = MetricsStatus::failed;
    r.metrics_reason = fmt::format("the range profiler stored {} ranges for the {} kernels the case launches",
                                   rows.size(), expected);
    return;
  }
  CaseMetrics m;
  for (std::size_t i = 0; i < rows.size(); ++i)
    m.kernels.push_back(kernel_metrics_from(
        i < r.launch.size() ? r.launch[i].name : fmt::format("kernel {}", i), rows[i], m_request.extra));
  m.aggregate = aggregate_metrics(m.kernels);
  m.passes = profiler->passes();
  m.replay = kernel_replay ? "kernel" : "case";
  m.wall_s = monotonic_seconds() - t0;
  r.metrics = std::move(m);
  r.metrics_status = MetricsStatus::ok;
}

}  // namespace attn
