// The timing stage: CUDA-event samples of one prepared kernel under the run's protocol, plain or
// batched into a CUDA graph, with the L2 flushed before each sample in cold mode (outside the
// timed region). Owns its events and the flush buffer; never sees a correctness check.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/api/kernel_spec.hpp"
#include "profiling/cuda/device_buffer.hpp"
#include "profiling/engine/sampler.hpp"
#include "profiling/protocol.hpp"
#include "profiling/result.hpp"

namespace attn {

class CaseTimer {
 public:
  // `l2_bytes`: the device's L2 size; the flush reads twice that.
  CaseTimer(const Protocol& protocol, cudaStream_t stream, std::int64_t l2_bytes);
  ~CaseTimer();
  CaseTimer(const CaseTimer&) = delete;
  CaseTimer& operator=(const CaseTimer&) = delete;

  // Samples until the protocol's stopping rule (profiling/engine/sampler.hpp) says enough.
  // `span` receives the host time of the warm-up (graph capture included) and of the samples.
  TimingStats time(PreparedKernel& kernel, const AttentionArgs& args, SamplingSpan& span);
  TimingStats time(PreparedKernel& kernel, const AttentionArgs& args) {
    SamplingSpan ignored;
    return time(kernel, args, ignored);
  }
  // Evicts the L2 (dirty lines written back now); enqueued on the stream, not waited for.
  void flush_l2();
  // Flushes only in cold mode: the state every timed or measured launch starts from.
  void cold_start() {
    if (m_protocol.l2 == L2Mode::cold) flush_l2();
  }

 private:
  double time_one(PreparedKernel& kernel, const AttentionArgs& args);
  TimingStats time_plain(PreparedKernel& kernel, const AttentionArgs& args, SamplingSpan& span);
  TimingStats time_with_graph(PreparedKernel& kernel, const AttentionArgs& args, SamplingSpan& span);

  Protocol m_protocol;
  cudaStream_t m_stream;
  cudaEvent_t m_start = nullptr, m_stop = nullptr;
  DeviceBuffer m_flush, m_flush_sink;
};

}  // namespace attn
