// GPU tests for cudnn.sdpa: every case runs cuDNN's fused SDPA on seeded inputs and compares O and
// LSE with the fp64 CPU oracle; refusal cases check why_not. Skips with a reason where no GPU exists.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/api/half_convert.hpp"
#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/problem.hpp"
#include "kernels/cpu/cpu_reference.hpp"
#include "profiling/cuda/case_buffers.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/kernel_harness.hpp"

namespace attn {

KernelSpec make_cudnn_sdpa_spec();

namespace {

void cuda_ok(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

Problem make_problem(std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t sq, std::int64_t sk,
                     std::int64_t d, std::int64_t dv, DType dt, bool causal, Window w = {}) {
  Problem p;
  p.batch = b;
  p.heads_q = hq;
  p.heads_kv = hkv;
  p.seq_q = sq;
  p.seq_kv = sk;
  p.head_dim = d;
  p.head_dim_v = dv;
  p.dtype = dt;
  p.causal = causal;
  p.window = w;
  return p;
}

struct Outcome {
  double rel_l2 = 0;
  std::int64_t o_nan = 0;
  std::int64_t empty_rows_not_zero = 0;  // rows with no visible key whose O is not exactly 0
  double lse_max_abs = 0;                // over rows with a visible key
  std::int64_t lse_bad = 0;              // NaN, or -inf mismatch with the oracle
  std::int64_t rerun_diff = 0;           // O/LSE words that differ between the two runs (runs = 2)
  std::size_t workspace = 0;
};

struct CaseOptions {
  bool want_lse = true;
  // Empty: check every row against the full oracle; else only these rows (large problems).
  std::vector<RowIndex> rows;
  // 2: run the same prepared kernel again and compare bit for bit.
  int runs = 1;
};

Outcome run_case(const Problem& p, const CaseOptions& opt = {}) {
  const KernelSpec spec = make_cudnn_sdpa_spec();
  const std::string why = spec.why_not(p, {});
  if (!why.empty()) throw std::runtime_error("why_not refused " + p.full_label() + ": " + why);
  std::unique_ptr<PreparedKernel> kernel = spec.prepare(p, {});

  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto gen = [&](std::int64_t n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& x : v) x = round_to(p.dtype, dist(rng));
    return v;
  };
  const std::vector<float> q = gen(p.q_elems()), k = gen(p.k_elems()), v = gen(p.v_elems());

  // The engine's stages on a test stream: stream-ordered uploads, NaN poison, one run, read back.
  const float scale = static_cast<float>(p.default_scale());
  test::TestStream stream;
  if (!stream.get()) throw std::runtime_error("cudaStreamCreateWithFlags failed");
  const DeviceBuffer dq = upload(q, p.dtype, stream.get()), dk = upload(k, p.dtype, stream.get()),
                     dv = upload(v, p.dtype, stream.get());
  const CaseBuffers bufs = allocate_case_buffers(p, *kernel);
  AttentionArgs a = make_args(p, dq.get(), dk.get(), dv.get(), bufs, stream.get());
  if (!opt.want_lse) a.lse = nullptr;
  auto run_and_read = [&](std::vector<float>& o, std::vector<float>& lse) {
    run_once(*kernel, a, bufs);
    o = download(bufs.o, p.dtype, static_cast<std::size_t>(p.o_elems()), stream.get());
    lse = download(bufs.lse, DType::fp32, static_cast<std::size_t>(p.lse_elems()), stream.get());
  };
  std::vector<float> o_vals;
  std::vector<float> lse;
  run_and_read(o_vals, lse);

  Outcome out;
  out.workspace = kernel->workspace_bytes();
  if (opt.runs > 1) {
    std::vector<float> o2;
    std::vector<float> lse2;
    run_and_read(o2, lse2);
    for (std::size_t n = 0; n < o2.size(); ++n) out.rerun_diff += float_bits(o2[n]) != float_bits(o_vals[n]);
    if (opt.want_lse)
      for (std::size_t n = 0; n < lse2.size(); ++n)
        out.rerun_diff += float_bits(lse2[n]) != float_bits(lse[n]);
  }
  for (float x : o_vals) out.o_nan += std::isnan(x) ? 1 : 0;

  // The rows to check and the oracle's values for them: [rows.size(), Dv] and [rows.size()].
  std::vector<RowIndex> rows = opt.rows;
  if (rows.empty())
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads_q; ++h)
        for (std::int64_t i = 0; i < p.seq_q; ++i) rows.push_back(RowIndex{b, h, i});
  std::vector<double> o_ref(rows.size() * static_cast<std::size_t>(p.head_dim_v)), lse_ref(rows.size());
  if (opt.rows.empty()) {
    // The full oracle is threaded and writes BSHD/[B,Hq,Sq]; regather it in `rows` order.
    std::vector<double> o_full(static_cast<std::size_t>(p.o_elems())),
        lse_full(static_cast<std::size_t>(p.lse_elems()));
    cpu_reference_attention(p, q.data(), k.data(), v.data(), static_cast<double>(scale), o_full.data(),
                            lse_full.data());
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const RowIndex& x = rows[r];
      for (std::int64_t c = 0; c < p.head_dim_v; ++c)
        o_ref[r * static_cast<std::size_t>(p.head_dim_v) + static_cast<std::size_t>(c)] =
            o_full[static_cast<std::size_t>(((x.b * p.seq_q + x.i) * p.heads_q + x.h) * p.head_dim_v + c)];
      lse_ref[r] = lse_full[static_cast<std::size_t>((x.b * p.heads_q + x.h) * p.seq_q + x.i)];
    }
  } else {
    cpu_reference_rows(p, q.data(), k.data(), v.data(), static_cast<double>(scale), rows, o_ref.data(),
                       lse_ref.data());
  }

  double num = 0, den = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const RowIndex& x = rows[r];
    const bool empty = p.visible_keys(x.i).size() == 0;
    for (std::int64_t c = 0; c < p.head_dim_v; ++c) {
      const auto n = static_cast<std::size_t>(((x.b * p.seq_q + x.i) * p.heads_q + x.h) * p.head_dim_v + c);
      const double got = o_vals[n];
      const double ref = o_ref[r * static_cast<std::size_t>(p.head_dim_v) + static_cast<std::size_t>(c)];
      if (!std::isnan(got)) {
        num += (got - ref) * (got - ref);
        den += ref * ref;
      }
      if (empty && got != 0.0) ++out.empty_rows_not_zero;
    }
    if (!opt.want_lse) continue;
    const float got_lse = lse[static_cast<std::size_t>((x.b * p.heads_q + x.h) * p.seq_q + x.i)];
    if (std::isinf(lse_ref[r])) {
      if (!(std::isinf(got_lse) && got_lse < 0)) ++out.lse_bad;
    } else if (std::isnan(got_lse)) {
      ++out.lse_bad;
    } else {
      out.lse_max_abs = std::max(out.lse_max_abs, std::abs(got_lse - lse_ref[r]));
    }
  }
  out.rel_l2 = std::sqrt(num / den);
  std::printf(
      "[cudnn.sdpa] %-58s rows=%zu rel_l2=%.3e lse_max_abs=%.3e o_nan=%lld lse_bad=%lld workspace=%zu B\n",
      p.full_label().c_str(), rows.size(), out.rel_l2, out.lse_max_abs, static_cast<long long>(out.o_nan),
      static_cast<long long>(out.lse_bad), out.workspace);
  return out;
}

// O within the house tolerance of the fp64 oracle, no NaN, empty rows exactly 0, LSE within 1e-3.
void expect_matches(const Problem& p, const CaseOptions& opt = {}) {
  const Outcome r = run_case(p, opt);
  const double tol = p.dtype == DType::bf16 ? 1.6e-2 : 2e-3;
  EXPECT_LT(r.rel_l2, tol) << p.full_label();
  EXPECT_EQ(r.o_nan, 0) << p.full_label();
  EXPECT_EQ(r.empty_rows_not_zero, 0) << p.full_label();
  EXPECT_EQ(r.rerun_diff, 0) << p.full_label();
  if (opt.want_lse) {
    EXPECT_EQ(r.lse_bad, 0) << p.full_label();
    EXPECT_LT(r.lse_max_abs, 1e-3) << p.full_label();
  }
}

// Rows spread over batches, heads and positions, always including the first and last query rows.
std::vector<RowIndex> sample_rows(const Problem& p, int per_head_rows) {
  std::vector<RowIndex> rows;
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int64_t> pick(1, p.seq_q - 2);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h) {
      rows.push_back(RowIndex{b, h, 0});
      rows.push_back(RowIndex{b, h, p.seq_q - 1});
      for (int n = 0; n < per_head_rows; ++n) rows.push_back(RowIndex{b, h, pick(rng)});
    }
  return rows;
}

TEST(CudnnSdpa, ReportsVersion) {
  ATTN_SKIP_WITHOUT_GPU();
  const std::size_t version = cudnnGetVersion();
  int device = 0;
  cudaDeviceProp prop{};
  cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
  cuda_ok(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  std::printf("[cudnn.sdpa] cuDNN runtime %zu (headers %d), cudart %zu, device %s (sm_%d%d)\n", version,
              CUDNN_VERSION, cudnnGetCudartVersion(), prop.name, prop.major, prop.minor);
  EXPECT_GE(version, 90000u);
}

TEST(CudnnSdpa, NonCausalSquareFp16D64) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(2, 4, 4, 256, 256, 64, 64, DType::fp16, false));
}

TEST(CudnnSdpa, NonCausalSquareBf16D128) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(2, 4, 4, 256, 256, 128, 128, DType::bf16, false));
}

TEST(CudnnSdpa, NonCausalSeqQLongerThanSeqKv) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(1, 4, 4, 300, 100, 64, 64, DType::fp16, false));
}

TEST(CudnnSdpa, CausalBottomRightShortQueryFp16) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(2, 4, 4, 100, 300, 64, 64, DType::fp16, true));
}

TEST(CudnnSdpa, CausalBottomRightLongQueryFp16) {
  ATTN_SKIP_WITHOUT_GPU();
  // Rows 0..199 see no key: O = 0 and LSE = -inf there.
  expect_matches(make_problem(2, 4, 4, 300, 100, 64, 64, DType::fp16, true));
}

TEST(CudnnSdpa, CausalBottomRightLongQueryBf16D128) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(1, 4, 4, 300, 100, 128, 128, DType::bf16, true));
}

TEST(CudnnSdpa, CausalLongQueryWithoutLse) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(1, 2, 2, 300, 100, 64, 64, DType::fp16, true), CaseOptions{.want_lse = false});
}

TEST(CudnnSdpa, GqaCausalSeq127Fp16D128) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(2, 8, 2, 127, 127, 128, 128, DType::fp16, true));
}

TEST(CudnnSdpa, MqaBf16D64) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(2, 8, 1, 127, 200, 64, 64, DType::bf16, false));
}

TEST(CudnnSdpa, HeadDimVDiffersFromHeadDim) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(1, 4, 4, 128, 192, 128, 64, DType::fp16, true));
}

TEST(CudnnSdpa, CausalSlidingWindowFp16) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(1, 4, 4, 200, 320, 64, 64, DType::fp16, true, Window{48, -1}));
}

TEST(CudnnSdpa, BandWindowLeftAndRight) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(1, 4, 4, 200, 200, 64, 64, DType::fp16, false, Window{16, 8}));
}

TEST(CudnnSdpa, LeftOnlyWindowBf16) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(1, 4, 2, 192, 256, 64, 64, DType::bf16, false, Window{32, -1}));
}

TEST(CudnnSdpa, HeadDim256Bf16) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(1, 2, 2, 256, 256, 256, 256, DType::bf16, true));
}

TEST(CudnnSdpa, ReusesPlanOnSecondStreamBitExact) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_matches(make_problem(2, 4, 2, 300, 100, 64, 64, DType::fp16, true), CaseOptions{.runs = 2});
}

TEST(CudnnSdpa, LongCausalGqaSampledRows) {
  ATTN_SKIP_WITHOUT_GPU();
  const Problem p = make_problem(1, 16, 4, 4096, 4096, 128, 128, DType::fp16, true);
  expect_matches(p, CaseOptions{.rows = sample_rows(p, 6)});
}

TEST(CudnnSdpa, LongSlidingWindowSampledRows) {
  ATTN_SKIP_WITHOUT_GPU();
  const Problem p = make_problem(1, 8, 8, 2048, 3072, 64, 64, DType::bf16, true, Window{256, -1});
  expect_matches(p, CaseOptions{.rows = sample_rows(p, 6)});
}

// Refusals are static (why_not); they need no device.
TEST(CudnnSdpa, LeftOnlyWindowLongKvFollowsRuntimeVersion) {
  const KernelSpec spec = make_cudnn_sdpa_spec();
  const std::string why =
      spec.why_not(make_problem(1, 2, 2, 1024, 2048, 64, 64, DType::fp16, false, Window{128, -1}), {});
  if (cudnnGetVersion() == 91400)
    EXPECT_NE(why.find("9.14.0"), std::string::npos) << why;
  else
    EXPECT_EQ(why, "");
}

TEST(CudnnSdpa, RefusesHeadDimAbove256) {
  const KernelSpec spec = make_cudnn_sdpa_spec();
  const Problem p = make_problem(1, 2, 2, 128, 128, 320, 320, DType::fp16, false);
  const std::string why = spec.why_not(p, {});
  EXPECT_NE(why.find("head_dim = 320"), std::string::npos) << why;
  EXPECT_THROW((void)spec.prepare(p, {}), Unsupported);
}

TEST(CudnnSdpa, RefusesHeadDimNotMultipleOf8) {
  const KernelSpec spec = make_cudnn_sdpa_spec();
  const std::string why = spec.why_not(make_problem(1, 2, 2, 128, 128, 100, 100, DType::bf16, false), {});
  EXPECT_NE(why.find("multiples of 8"), std::string::npos) << why;
}

TEST(CudnnSdpa, RefusesFp32) {
  const KernelSpec spec = make_cudnn_sdpa_spec();
  const std::string why = spec.why_not(make_problem(1, 2, 2, 128, 128, 64, 64, DType::fp32, false), {});
  EXPECT_NE(why.find("dtype = fp32"), std::string::npos) << why;
}

TEST(CudnnSdpa, RefusesRightWindowWhenRowsStillExceedKeys) {
  // Rows 0..183 see no key and are dropped, yet 116 rows > 100 keys remain.
  const KernelSpec spec = make_cudnn_sdpa_spec();
  const std::string why =
      spec.why_not(make_problem(1, 2, 2, 300, 100, 64, 64, DType::fp16, false, Window{-1, 16}), {});
  EXPECT_NE(why.find("seq_q <= seq_kv"), std::string::npos) << why;
  EXPECT_NE(why.find("116 rows left"), std::string::npos) << why;
}

TEST(CudnnSdpa, TakesCausalLongQueryStatically) {
  const KernelSpec spec = make_cudnn_sdpa_spec();
  EXPECT_EQ(spec.why_not(make_problem(1, 2, 2, 300, 100, 64, 64, DType::fp16, true), {}), "");
  EXPECT_EQ(spec.id, "cudnn.sdpa");
  EXPECT_EQ(spec.backend, Backend::cuda);
}

}  // namespace
}  // namespace attn
