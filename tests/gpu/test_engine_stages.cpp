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
#include "profiling/cuda/device_inputs.hpp"
#include "profiling/cuda/failure.hpp"
#include "profiling/cuda/problem_cache.hpp"
#include "profiling/engine/inputs.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/kernel_harness.hpp"

namespace attn {
namespace {

void check_both_ways(const Problem& p, const std::string& reference_prefix) {
  test::TestStream stream;
  ASSERT_NE(stream.get(), nullptr);
  ProblemCache cache(42, stream.get());
  cache.use(p);
  const KernelSpec* spec = find_kernel("naive.unfused");
  ASSERT_NE(spec, nullptr);
  auto kernel = spec->prepare(p, {});
  const CaseBuffers b = allocate_case_buffers(p, *kernel);
  run_once(*kernel, make_args(p, cache.q().get(), cache.k().get(), cache.v().get(), b, stream.get()), b);
  const std::vector<float> lse =
      download(b.lse, DType::fp32, static_cast<std::size_t>(p.lse_elems()), stream.get());
  const CheckVerdict good = cache.check(*spec, b.o, lse);
  EXPECT_TRUE(good.correctness.pass) << good.reason;
  EXPECT_EQ(good.correctness.nonfinite, 0);
  EXPECT_EQ(cache.reference_name().rfind(reference_prefix, 0), 0u) << cache.reference_name();
  // The last element left unwritten (0xFF.. is NaN in every dtype), on the device.
  const std::size_t elem = dtype_bytes(p.dtype);
  const std::vector<std::uint8_t> nan(elem, 0xFF);
  ASSERT_EQ(cudaMemcpy(static_cast<std::uint8_t*>(b.o.get()) + b.o.bytes() - elem, nan.data(), elem,
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  const CheckVerdict verdict = cache.check(*spec, b.o, lse);
  EXPECT_FALSE(verdict.correctness.pass);
  EXPECT_EQ(verdict.correctness.nonfinite, 1);
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
  // The causal twin has the same inputs: kept, only the reference is its own.
  const void* q_other = cache.q().get();
  Problem causal = other;
  causal.causal = true;
  cache.use(causal);
  EXPECT_EQ(cache.problem(), causal);
  EXPECT_EQ(cache.q().get(), q_other);
}

// A cuDNN graph built ahead for the next problem (the supervisor's hint) is the one that problem's
// error bar then uses: the same bar as a cache that built it when the problem came.
TEST(EngineStages, ProblemCacheTakesOverTheCudnnBuildOfTheExpectedProblem) {
  ATTN_SKIP_WITHOUT_GPU();
  if (find_kernel("cudnn.sdpa") == nullptr) GTEST_SKIP() << "built without cuDNN";
  const Problem next = test::make_problem(1, 4, 4, 256, 256, 64, DType::fp16);
  Problem first = next;
  first.seq_q = first.seq_kv = 128;
  const KernelSpec* spec = find_kernel("naive.unfused");
  ASSERT_NE(spec, nullptr);
  test::TestStream stream;
  auto bar_of = [&](ProblemCache& cache) {
    const Problem& p = cache.problem();
    auto kernel = spec->prepare(p, {});
    const CaseBuffers b = allocate_case_buffers(p, *kernel);
    run_once(*kernel, make_args(p, cache.q().get(), cache.k().get(), cache.v().get(), b, stream.get()), b);
    const CheckVerdict v = cache.check(*spec, b.o, {});
    EXPECT_TRUE(v.correctness.pass) << v.reason;
    return cache.cudnn_rel_l2();
  };
  ProblemCache hinted(42, stream.get());
  hinted.use(first);
  hinted.start_cudnn_build();
  hinted.prefetch_cudnn_build(next);
  hinted.use(next);
  const std::optional<double> bar = bar_of(hinted);
  ProblemCache plain(42, stream.get());
  plain.use(next);
  const std::optional<double> plain_bar = bar_of(plain);
  ASSERT_TRUE(bar.has_value());
  ASSERT_TRUE(plain_bar.has_value());
  EXPECT_GT(*bar, 0.0);
  EXPECT_EQ(*bar, *plain_bar);
}

// The device generator draws exactly what the host generator draws (same SplitMix64 and
// Box-Muller), so both backends and the host copy of the inputs agree bit for bit.
TEST(EngineStages, DeviceInputsEqualTheHostGenerator) {
  ATTN_SKIP_WITHOUT_GPU();
  test::TestStream stream;
  for (const DType t : {DType::fp16, DType::bf16, DType::fp32}) {
    SCOPED_TRACE(std::string(to_string(t)));
    const Problem p = test::make_problem(1, 3, 3, 1001, 1001, 96, t);  // odd element count
    const HostInputs host = generate_inputs(p, 7);
    const InputStreams keys = input_streams(7);
    DeviceBuffer k(static_cast<std::size_t>(p.k_elems()) * dtype_bytes(t));
    generate_normal_on_device(k.get(), t, p.k_elems(), keys.k, stream.get());
    const std::vector<float> device = download(k, t, static_cast<std::size_t>(p.k_elems()), stream.get());
    ASSERT_EQ(device.size(), host.k.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < device.size(); ++i) differ += device[i] != host.k[i] ? 1 : 0;
    EXPECT_EQ(differ, 0u);
  }
}

// compare_on_device is compare_outputs on the device: same statistics, NaN and inf counted.
TEST(EngineStages, DeviceComparisonMatchesTheHostComparison) {
  ATTN_SKIP_WITHOUT_GPU();
  test::TestStream stream;
  const std::int64_t n = 300001;
  std::vector<float> ref(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    ref[static_cast<std::size_t>(i)] = std::sin(0.001f * static_cast<float>(i));
    out[static_cast<std::size_t>(i)] =
        ref[static_cast<std::size_t>(i)] + 1e-3f * std::cos(0.37f * static_cast<float>(i));
  }
  for (const DType t : {DType::fp16, DType::fp32}) {
    SCOPED_TRACE(std::string(to_string(t)));
    const DeviceBuffer o = upload(out, t, stream.get()), r = upload(ref, DType::fp32, stream.get());
    const std::vector<float> rounded = download(o, t, out.size(), stream.get());
    const ErrorStats h = compare_outputs(rounded, ref);
    const ErrorStats d = compare_on_device(o.get(), t, r.as<float>(), n, stream.get());
    EXPECT_NEAR(d.rel_l2, h.rel_l2, 1e-12 * h.rel_l2);
    EXPECT_EQ(d.max_abs, h.max_abs);
    EXPECT_EQ(d.nonfinite, 0);
  }
  std::vector<float> bad = out;
  bad[5] = std::numeric_limits<float>::quiet_NaN();
  bad[n - 1] = std::numeric_limits<float>::infinity();
  const DeviceBuffer o = upload(bad, DType::fp32, stream.get()), r = upload(ref, DType::fp32, stream.get());
  const ErrorStats d = compare_on_device(o.get(), DType::fp32, r.as<float>(), n, stream.get());
  EXPECT_EQ(d.nonfinite, 2);
  EXPECT_TRUE(std::isinf(d.rel_l2));
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
  SamplingSpan span;
  const TimingStats plain = CaseTimer(proto, stream.get(), 1 << 20).time(*kernel, args, span);
  EXPECT_EQ(plain.samples, 5);
  EXPECT_GT(span.sampling_s, 0.0);  // five synchronised samples take host time
  EXPECT_GE(span.warmup_s, 0.0);
  EXPECT_EQ(plain.launches_per_sample, 1);
  EXPECT_GT(plain.median_ms, 0.0);
  proto.graphs = true;
  proto.graph_batch = 4;
  const TimingStats graph = CaseTimer(proto, stream.get(), 1 << 20).time(*kernel, args, span);
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
