// Shared harness of the GPU kernel tests: dtype-rounded random inputs, one poisoned run of a
// prepared kernel through the engine's own stages (profiling/cuda/case_buffers, case_timer), the
// rows the fp64 oracle checks, and the error metrics against it.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/api/half_convert.hpp"
#include "kernels/api/kernel_spec.hpp"
#include "kernels/cpu/cpu_reference.hpp"
#include "profiling/cuda/case_buffers.hpp"
#include "profiling/cuda/case_timer.hpp"
#include "profiling/cuda/cuda_stream.hpp"

namespace attn::test {

using attn::DType;
using attn::Problem;

#define ASSERT_CUDA(call) \
  ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

struct HostTensor {
  std::vector<float> values;  // rounded to the dtype: what the oracle reads and the device gets
};

inline HostTensor make_tensor(DType t, std::int64_t n, float amplitude, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-amplitude, amplitude);
  HostTensor h;
  h.values.resize(static_cast<std::size_t>(n));
  for (float& x : h.values) x = attn::round_to(t, dist(rng));
  return h;
}

struct Inputs {
  HostTensor q, k, v;
};

// Q, K in [-2, 2): scaled scores spread ~1.3, so the softmax is neither flat nor one-hot.
inline Inputs make_inputs(const Problem& p, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Inputs in;
  in.q = make_tensor(p.dtype, p.q_elems(), 2.0f, rng);
  in.k = make_tensor(p.dtype, p.k_elems(), 2.0f, rng);
  in.v = make_tensor(p.dtype, p.v_elems(), 1.0f, rng);
  return in;
}

struct RunOutput {
  std::vector<float> o, lse;
  double ms = 0.0;  // median of timed launches, when asked
};

// A non-blocking stream for one test run: the engine's own owned stream (a failure to create it
// throws attn::CudaError, which fails the test).
using TestStream = attn::CudaStream;

// The median of `launches` timed launches through the engine's timer: no warm-up, L2 warm.
inline double median_launch_ms(attn::PreparedKernel& kernel, const attn::AttentionArgs& args, int launches) {
  attn::Protocol fixed;
  fixed.warmup_ms = 0;
  fixed.min_samples = fixed.max_samples = launches;
  fixed.max_time_s = 1e9;  // exactly `launches` samples
  fixed.l2 = attn::L2Mode::warm;
  attn::CaseTimer timer(fixed, static_cast<cudaStream_t>(args.stream), 0);
  return timer.time(kernel, args).median_ms;
}

// The engine's stages on a test stream: upload, poison O and LSE with NaN, run once (plus `timed`
// samples through the engine's timer, L2 warm, no warm-up) and read back. The copies are ordered on
// the stream (profiling/cuda/transfer.hpp), so no device-wide synchronisation is needed.
inline void run_prepared(attn::PreparedKernel& kernel, const Problem& p, const Inputs& in, int timed,
                         RunOutput& out) {
  TestStream stream;
  ASSERT_NE(stream.get(), nullptr) << "cudaStreamCreateWithFlags failed";
  const attn::DeviceBuffer dq = attn::upload(in.q.values, p.dtype, stream.get());
  const attn::DeviceBuffer dk = attn::upload(in.k.values, p.dtype, stream.get());
  const attn::DeviceBuffer dv = attn::upload(in.v.values, p.dtype, stream.get());
  const attn::CaseBuffers b = attn::allocate_case_buffers(p, kernel);
  const attn::AttentionArgs args = attn::make_args(p, dq.get(), dk.get(), dv.get(), b, stream.get());
  attn::run_once(kernel, args, b);
  if (timed > 0) out.ms = median_launch_ms(kernel, args, timed);
  out.o = attn::download(b.o, p.dtype, static_cast<std::size_t>(p.o_elems()), stream.get());
  if (kernel.writes_lse())
    out.lse = attn::download(b.lse, DType::fp32, static_cast<std::size_t>(p.lse_elems()), stream.get());
  else
    out.lse.clear();
}

inline void run_kernel(const attn::KernelSpec& spec, const Problem& p, const attn::Knobs& knobs,
                       const Inputs& in, int timed, RunOutput& out) {
  ASSERT_EQ(attn::kernel_why_not(spec, p, knobs), "") << spec.id << " " << p.full_label();
  std::unique_ptr<attn::PreparedKernel> prepared = spec.prepare(p, knobs);
  run_prepared(*prepared, p, in, timed, out);
}

// Rows the oracle computes: all of them for small problems, otherwise the first and last 16 of
// each head plus 32 spread ones (the tails hold the masked-tile and ragged-tile paths).
inline std::vector<attn::RowIndex> check_rows(const Problem& p) {
  std::vector<attn::RowIndex> rows;
  const bool all = p.batch * p.heads_q * p.seq_q * p.seq_kv <= (std::int64_t{1} << 23);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h) {
      if (all || p.seq_q <= 64) {
        for (std::int64_t i = 0; i < p.seq_q; ++i) rows.push_back({b, h, i});
        continue;
      }
      for (std::int64_t i = 0; i < 16; ++i) rows.push_back({b, h, i});
      for (std::int64_t n = 0; n < 32; ++n)
        rows.push_back({b, h, 16 + (n * 997 + b * 31 + h * 7) % (p.seq_q - 32)});
      for (std::int64_t i = p.seq_q - 16; i < p.seq_q; ++i) rows.push_back({b, h, i});
    }
  return rows;
}

struct Errors {
  double rel_l2 = 0.0;
  double lse_max_abs = 0.0;
};

// O of the picked rows against the oracle (rel L2), LSE by max abs error (both non-finite -> equal).
inline Errors compare(const Problem& p, const std::vector<attn::RowIndex>& rows, const RunOutput& got,
                      const std::vector<double>& ref_o, const std::vector<double>& ref_lse) {
  Errors e;
  double num = 0.0, den = 0.0;
  const std::int64_t dv = p.head_dim_v;
  for (std::size_t n = 0; n < rows.size(); ++n) {
    const auto& r = rows[n];
    for (std::int64_t d = 0; d < dv; ++d) {
      const double x = got.o[static_cast<std::size_t>(((r.b * p.seq_q + r.i) * p.heads_q + r.h) * dv + d)];
      const double y = ref_o[n * static_cast<std::size_t>(dv) + static_cast<std::size_t>(d)];
      num += (x - y) * (x - y);
      den += y * y;
    }
    if (!got.lse.empty()) {
      const double l = got.lse[static_cast<std::size_t>((r.b * p.heads_q + r.h) * p.seq_q + r.i)];
      if (std::isinf(ref_lse[n]) && std::isinf(l) && l < 0) continue;
      e.lse_max_abs = std::max(e.lse_max_abs, std::isfinite(l) ? std::abs(l - ref_lse[n])
                                                               : std::numeric_limits<double>::infinity());
    }
  }
  e.rel_l2 = den > 0.0 ? std::sqrt(num) / std::sqrt(den) : std::sqrt(num);
  return e;
}

// Every element of O and LSE written and none NaN (the poison); rows with no visible key exactly 0
// with LSE -inf. Counts those rows into `empty_rows`. Fatal failures: callers check
// HasFatalFailure().
inline void expect_written_and_empty_rows_zero(const Problem& p, const RunOutput& got,
                                               std::size_t& empty_rows) {
  std::size_t nan_o = 0, nan_lse = 0;
  for (float x : got.o) nan_o += std::isnan(x) ? 1 : 0;
  for (float x : got.lse) nan_lse += std::isnan(x) ? 1 : 0;
  ASSERT_EQ(nan_o, 0u) << "NaN (or unwritten) elements in O";
  ASSERT_EQ(nan_lse, 0u) << "NaN (or unwritten) elements in LSE";
  empty_rows = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seq_q; ++i) {
        if (p.visible_keys(i).size() != 0) continue;
        ++empty_rows;
        const float lse = got.lse[static_cast<std::size_t>((b * p.heads_q + h) * p.seq_q + i)];
        ASSERT_TRUE(std::isinf(lse) && lse < 0) << "row " << i << " sees no key, LSE = " << lse;
        for (std::int64_t d = 0; d < p.head_dim_v; ++d)
          ASSERT_EQ(got.o[static_cast<std::size_t>(((b * p.seq_q + i) * p.heads_q + h) * p.head_dim_v + d)],
                    0.0f);
      }
}

// The fp64 oracle on check_rows(p): O (Dv values a row) and LSE of each row.
struct Oracle {
  std::vector<attn::RowIndex> rows;
  std::vector<double> o, lse;
};

inline Oracle oracle_rows(const Problem& p, const Inputs& in) {
  Oracle r;
  r.rows = check_rows(p);
  r.o.resize(r.rows.size() * static_cast<std::size_t>(p.head_dim_v));
  r.lse.resize(r.rows.size());
  attn::cpu_reference_rows(p, in.q.values.data(), in.k.values.data(), in.v.values.data(), p.default_scale(),
                           r.rows, r.o.data(), r.lse.data());
  return r;
}

inline Errors compare(const Problem& p, const Oracle& ref, const RunOutput& got) {
  return compare(p, ref.rows, got, ref.o, ref.lse);
}

// One correctness run of the GPU kernel suites: inputs drawn from `seed` (or built by the caller), one
// launch of `spec` with `knobs`, every element written (empty rows exactly 0, LSE -inf), then the error
// against the fp64 oracle. The inputs and oracle stay for tolerance rules that rerun a baseline on them.
// Fatal failures: callers check HasFatalFailure().
struct OracleRun {
  Inputs in;
  RunOutput got;
  std::size_t empty_rows = 0;
  Oracle ref;
  Errors err;
};

// On inputs the caller built (a structured case): `out.in` is run as it is.
inline void run_against_oracle(const attn::KernelSpec& spec, const Problem& p, const attn::Knobs& knobs,
                               OracleRun& out) {
  run_kernel(spec, p, knobs, out.in, 0, out.got);
  if (::testing::Test::HasFatalFailure()) return;
  expect_written_and_empty_rows_zero(p, out.got, out.empty_rows);
  if (::testing::Test::HasFatalFailure()) return;
  out.ref = oracle_rows(p, out.in);
  out.err = compare(p, out.ref, out.got);
}

inline void run_against_oracle(const attn::KernelSpec& spec, const Problem& p, const attn::Knobs& knobs,
                               std::uint32_t seed, OracleRun& out) {
  out.in = make_inputs(p, seed);
  run_against_oracle(spec, p, knobs, out);
}

inline double dtype_bound(DType t) { return 4.0 * std::ldexp(1.0, t == DType::fp16 ? -11 : -8); }

inline Problem make_problem(std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t sq,
                            std::int64_t sk, std::int64_t d, DType t, bool causal = false,
                            attn::Window w = {}) {
  Problem p;
  p.batch = b;
  p.heads_q = hq;
  p.heads_kv = hkv;
  p.seq_q = sq;
  p.seq_kv = sk;
  p.head_dim = d;
  p.head_dim_v = d;
  p.dtype = t;
  p.causal = causal;
  p.window = w;
  return p;
}

}  // namespace attn::test
