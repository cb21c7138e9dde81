// Shared harness of the GPU kernel tests (fa2.mma, ffpa.l1): device buffers, dtype-rounded
// random inputs, one poisoned run of a prepared kernel (plus timed launches), the rows the fp64
// oracle checks, and the error metrics against it.
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

namespace attn::test {

using attn::DType;
using attn::Problem;

#define ASSERT_CUDA(call) \
  ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : m_bytes(bytes) {
    if (bytes > 0 && cudaMalloc(&m_ptr, bytes) != cudaSuccess) m_ptr = nullptr;
  }
  ~DeviceBuffer() { cudaFree(m_ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return m_ptr; }
  bool ok() const { return m_bytes == 0 || m_ptr != nullptr; }

 private:
  void* m_ptr = nullptr;
  std::size_t m_bytes = 0;
};

struct HostTensor {
  std::vector<float> values;        // rounded to the dtype: what the oracle reads
  std::vector<std::uint16_t> bits;  // fp16 / bf16 device bits
};

inline HostTensor make_tensor(DType t, std::int64_t n, float amplitude, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-amplitude, amplitude);
  HostTensor h;
  h.values.resize(static_cast<std::size_t>(n));
  h.bits.resize(static_cast<std::size_t>(n));
  for (std::size_t e = 0; e < h.values.size(); ++e) {
    const float x = attn::round_to(t, dist(rng));
    h.values[e] = x;
    h.bits[e] = t == DType::fp16 ? attn::float_to_fp16(x) : attn::float_to_bf16(x);
  }
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

// Uploads, poisons O and LSE with NaN, runs once (plus `timed` timed launches) and reads back.
inline void run_prepared(attn::PreparedKernel& kernel, const Problem& p, const Inputs& in, int timed,
                         RunOutput& out) {
  attn::PreparedKernel* prepared = &kernel;
  const std::size_t e = 2;
  DeviceBuffer dq(in.q.bits.size() * e), dk(in.k.bits.size() * e), dv(in.v.bits.size() * e);
  DeviceBuffer dout(static_cast<std::size_t>(p.o_elems()) * e);
  DeviceBuffer dlse(static_cast<std::size_t>(p.lse_elems()) * 4);
  DeviceBuffer dws(prepared->workspace_bytes());
  ASSERT_TRUE(dq.ok() && dk.ok() && dv.ok() && dout.ok() && dlse.ok() && dws.ok()) << "cudaMalloc failed";
  ASSERT_CUDA(cudaMemcpy(dq.get(), in.q.bits.data(), in.q.bits.size() * e, cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpy(dk.get(), in.k.bits.data(), in.k.bits.size() * e, cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpy(dv.get(), in.v.bits.data(), in.v.bits.size() * e, cudaMemcpyHostToDevice));
  // All-ones bytes are NaN in fp16, bf16 and fp32: any element left unwritten shows.
  ASSERT_CUDA(cudaMemset(dout.get(), 0xFF, static_cast<std::size_t>(p.o_elems()) * e));
  ASSERT_CUDA(cudaMemset(dlse.get(), 0xFF, static_cast<std::size_t>(p.lse_elems()) * 4));
  // The uploads and memsets above are queued on the legacy stream and return before they finish;
  // the kernel's stream is non-blocking (no implicit order with it): wait, or a late poison
  // overwrites what the kernel already wrote.
  ASSERT_CUDA(cudaDeviceSynchronize());
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  attn::AttentionArgs args;
  args.q = dq.get();
  args.k = dk.get();
  args.v = dv.get();
  args.o = dout.get();
  args.lse = prepared->writes_lse() ? static_cast<float*>(dlse.get()) : nullptr;
  args.scale = static_cast<float>(p.default_scale());
  args.workspace = dws.get();
  args.workspace_bytes = prepared->workspace_bytes();
  args.stream = stream;
  prepared->run(args);
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  if (timed > 0) {
    cudaEvent_t start = nullptr, stop = nullptr;
    ASSERT_CUDA(cudaEventCreate(&start));
    ASSERT_CUDA(cudaEventCreate(&stop));
    std::vector<float> ms;
    for (int r = 0; r < timed; ++r) {
      ASSERT_CUDA(cudaEventRecord(start, stream));
      prepared->run(args);
      ASSERT_CUDA(cudaEventRecord(stop, stream));
      ASSERT_CUDA(cudaEventSynchronize(stop));
      float t = 0.0f;
      ASSERT_CUDA(cudaEventElapsedTime(&t, start, stop));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    out.ms = ms[ms.size() / 2];
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  ASSERT_CUDA(cudaStreamDestroy(stream));
  std::vector<std::uint16_t> raw(static_cast<std::size_t>(p.o_elems()));
  ASSERT_CUDA(cudaMemcpy(raw.data(), dout.get(), raw.size() * e, cudaMemcpyDeviceToHost));
  out.o.resize(raw.size());
  for (std::size_t n = 0; n < raw.size(); ++n)
    out.o[n] = p.dtype == DType::fp16 ? attn::fp16_to_float(raw[n]) : attn::bf16_to_float(raw[n]);
  out.lse.resize(static_cast<std::size_t>(p.lse_elems()));
  ASSERT_CUDA(cudaMemcpy(out.lse.data(), dlse.get(), out.lse.size() * 4, cudaMemcpyDeviceToHost));
}

inline void run_kernel(const attn::KernelSpec& spec, const Problem& p, const attn::Knobs& knobs,
                       const Inputs& in, int timed, RunOutput& out) {
  ASSERT_EQ(spec.why_not(p, knobs), "") << spec.id << " " << p.full_label();
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

// One correctness run of the GPU kernel suites: inputs drawn from `seed`, one launch of `spec` with
// `knobs`, every element written (empty rows exactly 0, LSE -inf), then the error against the fp64
// oracle. The inputs and oracle stay for tolerance rules that rerun a baseline on them. Fatal
// failures: callers check HasFatalFailure().
struct OracleRun {
  Inputs in;
  RunOutput got;
  std::size_t empty_rows = 0;
  Oracle ref;
  Errors err;
};

inline void run_against_oracle(const attn::KernelSpec& spec, const Problem& p, const attn::Knobs& knobs,
                               std::uint32_t seed, OracleRun& out) {
  out.in = make_inputs(p, seed);
  run_kernel(spec, p, knobs, out.in, 0, out.got);
  if (::testing::Test::HasFatalFailure()) return;
  expect_written_and_empty_rows_zero(p, out.got, out.empty_rows);
  if (::testing::Test::HasFatalFailure()) return;
  out.ref = oracle_rows(p, out.in);
  out.err = compare(p, out.ref, out.got);
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
