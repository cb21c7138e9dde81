// Event timing, CUDA-graph batching and the L2 flush (see case_timer.hpp).
#include "profiling/cuda/case_timer.hpp"

#include <algorithm>
#include <cmath>

#include "profiling/cuda/l2_flush.hpp"

namespace attn {

CaseTimer::CaseTimer(const Protocol& protocol, cudaStream_t stream, std::int64_t l2_bytes)
    : m_protocol(protocol), m_stream(stream) {
  ATTN_CUDA_CHECK(cudaEventCreate(&m_start));
  ATTN_CUDA_CHECK(cudaEventCreate(&m_stop));
  // Reading twice the L2's size evicts every line whatever the replacement policy and the H100's
  // two L2 partitions do; zero-filled once so the flush kernel's reads are well defined.
  m_flush = DeviceBuffer(2 * static_cast<std::size_t>(std::max<std::int64_t>(l2_bytes, 1 << 20)));
  ATTN_CUDA_CHECK(cudaMemsetAsync(m_flush.get(), 0, m_flush.bytes(), m_stream));
  ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
  m_flush_sink = DeviceBuffer(sizeof(unsigned));
}

CaseTimer::~CaseTimer() {
  if (m_start) (void)cudaEventDestroy(m_start);
  if (m_stop) (void)cudaEventDestroy(m_stop);
}

TimingStats CaseTimer::time(PreparedKernel& kernel, const AttentionArgs& args, SamplingSpan& span) {
  const double t0 = monotonic_seconds();
  TimingStats t = m_protocol.graphs ? time_with_graph(kernel, args, span) : time_plain(kernel, args, span);
  span.warmup_s = monotonic_seconds() - t0 - span.sampling_s;  // graph capture counts as warm-up
  return t;
}

void CaseTimer::flush_l2() {
  launch_l2_flush(m_flush.get(), m_flush.bytes(), m_flush_sink.as<unsigned>(), m_stream);
  ATTN_CUDA_CHECK(cudaGetLastError());
}

double CaseTimer::time_one(PreparedKernel& kernel, const AttentionArgs& args) {
  cold_start();
  ATTN_CUDA_CHECK(cudaEventRecord(m_start, m_stream));
  kernel.run(args);
  ATTN_CUDA_CHECK(cudaEventRecord(m_stop, m_stream));
  ATTN_CUDA_CHECK(cudaEventSynchronize(m_stop));
  float ms = 0;
  ATTN_CUDA_CHECK(cudaEventElapsedTime(&ms, m_start, m_stop));
  return ms;
}

TimingStats CaseTimer::time_plain(PreparedKernel& kernel, const AttentionArgs& args, SamplingSpan& span) {
  return measure_samples(
      m_protocol, [&] { return time_one(kernel, args); }, {}, &span);
}

// Tiny cases: one sample = one graph of n launches, so launch gaps do not dominate. Cold L2 then
// flushes before each graph, not between its launches.
TimingStats CaseTimer::time_with_graph(PreparedKernel& kernel, const AttentionArgs& args,
                                       SamplingSpan& span) {
  int n = m_protocol.graph_batch;
  if (n <= 0) {
    const double one_ms = std::max(1e-3, time_one(kernel, args));
    n = std::clamp(static_cast<int>(std::lround(1.0 / one_ms)), 1, 200);  // ~1 ms per sample
  }
  cudaGraph_t graph = nullptr;
  ATTN_CUDA_CHECK(cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < n; ++i) kernel.run(args);
  } catch (...) {
    (void)cudaStreamEndCapture(m_stream, &graph);
    if (graph) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    throw;
  }
  ATTN_CUDA_CHECK(cudaStreamEndCapture(m_stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  ATTN_CUDA_CHECK(inst);
  struct ExecGuard {
    cudaGraphExec_t e;
    ~ExecGuard() { (void)cudaGraphExecDestroy(e); }
  } guard{exec};
  TimingStats t = measure_samples(
      m_protocol,
      [&] {
        cold_start();
        ATTN_CUDA_CHECK(cudaEventRecord(m_start, m_stream));
        ATTN_CUDA_CHECK(cudaGraphLaunch(exec, m_stream));
        ATTN_CUDA_CHECK(cudaEventRecord(m_stop, m_stream));
        ATTN_CUDA_CHECK(cudaEventSynchronize(m_stop));
        float ms = 0;
        ATTN_CUDA_CHECK(cudaEventElapsedTime(&ms, m_start, m_stop));
        return static_cast<double>(ms) / n;
      },
      {}, &span);
  t.launches_per_sample = n;
  return t;
}

}  // namespace attn
