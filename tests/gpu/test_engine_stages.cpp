// The CUDA engine's stages on their own (profiling/cuda/): the problem cache's check passes a
// correct output and fails a poisoned one, on both reference paths (cpu.reference for small
// problems, cuda.reference + sampled rows for large ones); the timer honours plain and graph
// modes; failure classification tells oom from error without losing the context.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/registry.hpp"
#include "profiling/cuda/case_buffers.hpp"
#include "profiling/cuda/case_timer.hpp"
#include "profiling/cuda/failure.hpp"
#include "profiling/cuda/problem_cache.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/kernel_harness.hpp"

namespace attn {
namespace {

// Runs cuda.reference's spec on the cache's device inputs through the stages; returns O (as fp32).
std::vector<float> run_on_cache(const KernelSpec& spec, ProblemCache& cache, cudaStream_t stream,
                                std::vector<float>& lse) {
  const Problem& p = cache.problem();
  auto kernel = spec.prepare(p, {});
  const CaseBuffers b = allocate_case_buffers(p, *kernel);
  run_once(*kernel, make_args(p, cache.q().get(), cache.k().get(), cache.v().get(), b, stream), b);
  lse = download(b.lse, DType::fp32, static_cast<std::size_t>(p.lse_elems()), stream);
  return download(b.o, p.dtype, static_cast<std::size_t>(p.o_elems()), stream);
}

void check_both_ways(const Problem& p, const std::string& reference_prefix) {
  test::TestStream stream;
  ASSERT_NE(stream.get(), nullptr);
  ProblemCache cache(42, stream.get());
  cache.use(p);
  const KernelSpec* spec = find_kernel("naive.unfused");
  ASSERT_NE(spec, nullptr);
  std::vector<float> lse;
  const std::vector<float> out = run_on_cache(*spec, cache, stream.get(), lse);
  const CheckVerdict good = cache.check(*spec, out, lse);
  EXPECT_TRUE(good.correctness.pass) << good.reason;
  EXPECT_EQ(cache.reference_name().rfind(reference_prefix, 0), 0u) << cache.reference_name();
  std::vector<float> bad = out;
  bad[bad.size() - 1] = std::numeric_limits<float>::quiet_NaN();  // the last element left unwritten
  const CheckVerdict verdict = cache.check(*spec, bad, lse);
  EXPECT_FALSE(verdict.correctness.pass);
  EXPECT_FALSE(verdict.reason.empty());
}

TEST(EngineStages, ProblemCacheChecksAgainstCpuReferenceOnSmallProblems) {
  ATTN_SKIP_WITHOUT_GPU();
  check_both_ways(test::make_problem(2, 4, 2, 130, 257, 64, DType::fp16, true), "cpu.reference");
}

TEST(EngineStages, ProblemCacheChecksAgainstCudaReferenceOnLargeProblems) {
  ATTN_SKIP_WITHOUT_GPU();
  // 2 * 8 * 128 * 4096^2 = 3.4e10 FLOPs: past the CPU oracle's limit, so cuda.reference + sampled rows.
  check_both_ways(test::make_problem(1, 8, 8, 4096, 4096, 64, DType::bf16), "cuda.reference");
}

TEST(EngineStages, ProblemCacheKeepsInputsForTheSameProblemOnly) {
  ATTN_SKIP_WITHOUT_GPU();
  test::TestStream stream;
  ProblemCache cache(42, stream.get());
  const Problem p = test::make_problem(1, 2, 2, 17, 17, 64, DType::fp16);
  cache.use(p);
  const void* q = cache.q().get();
  cache.use(p);
  EXPECT_EQ(cache.q().get(), q);  // same problem: not uploaded again
  Problem other = p;
  other.seq_q = other.seq_kv = 33;
  cache.use(other);
  EXPECT_EQ(cache.problem(), other);
  EXPECT_EQ(cache.q().bytes(), static_cast<std::size_t>(other.q_elems()) * 2);
}

TEST(EngineStages, TimerHonoursPlainAndGraphModes) {
  ATTN_SKIP_WITHOUT_GPU();
  test::TestStream stream;
  const Problem p = test::make_problem(1, 2, 2, 64, 64, 64, DType::fp16);
  const DeviceBuffer q =
      upload(std::vector<float>(static_cast<std::size_t>(p.q_elems()), 0.5f), p.dtype, stream.get());
  auto kernel = find_kernel("naive.unfused")->prepare(p, {});
  const CaseBuffers b = allocate_case_buffers(p, *kernel);
  const AttentionArgs args = make_args(p, q.get(), q.get(), q.get(), b, stream.get());
  Protocol proto;
  proto.warmup_ms = 0;
  proto.min_samples = proto.max_samples = 5;
  proto.l2 = L2Mode::cold;
  const TimingStats plain = CaseTimer(proto, stream.get(), 1 << 20).time(*kernel, args);
  EXPECT_EQ(plain.samples, 5);
  EXPECT_EQ(plain.launches_per_sample, 1);
  EXPECT_GT(plain.median_ms, 0.0);
  proto.graphs = true;
  proto.graph_batch = 4;
  const TimingStats graph = CaseTimer(proto, stream.get(), 1 << 20).time(*kernel, args);
  EXPECT_EQ(graph.samples, 5);
  EXPECT_EQ(graph.launches_per_sample, 4);
  EXPECT_GT(graph.median_ms, 0.0);
}

TEST(EngineStages, FailureClassificationTellsOomFromError) {
  ATTN_SKIP_WITHOUT_GPU();
  const FailureVerdict oom = classify_failure("k p", "cudaMalloc(1 bytes) failed", true);
  EXPECT_EQ(oom.status, Status::oom);
  EXPECT_NE(oom.reason.find("free of"), std::string::npos) << oom.reason;
  EXPECT_TRUE(oom.context_lost.empty());
  const FailureVerdict dnn = classify_failure("k p", "cudnn: CUDNN_STATUS_ALLOC_FAILED", false);
  EXPECT_EQ(dnn.status, Status::oom);
  const FailureVerdict err = classify_failure("k p", "a library said no", false);
  EXPECT_EQ(err.status, Status::error);
  EXPECT_EQ(err.reason, "a library said no");
  EXPECT_TRUE(err.context_lost.empty());
}

}  // namespace
}  // namespace attn
