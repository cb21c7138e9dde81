// Inputs, reference and cuDNN error bar of one problem, and the check against them
// (see problem_cache.hpp).
#include "profiling/cuda/problem_cache.hpp"

#include <fmt/format.h>

#include <random>

#include "kernels/registry.hpp"
#include "profiling/cuda/case_buffers.hpp"
#include "profiling/cuda/cuda_status.hpp"

namespace attn {

namespace {
// Above this many reference FLOPs the CPU oracle would take seconds: use cuda.reference on the
// whole output and cpu.reference on kSampledRows rows instead.
constexpr double kCpuReferenceMaxFlops = 2e9;
constexpr int kSampledRows = 48;
// cuda.reference (fp32 accumulation over fp32 copies of the inputs) must match the fp64 oracle to
// fp32 accuracy on the sampled rows, or it is not fit to be a reference.
constexpr double kCudaReferenceMaxRelL2 = 1e-4;
}  // namespace

void ProblemCache::use(const Problem& p) {
  if (m_valid && m_problem == p) return;
  *this = ProblemCache(m_seed, m_stream);
  m_problem = p;
  m_host = generate_inputs(p, m_seed);
  m_q = upload(m_host.q, p.dtype, m_stream);
  m_k = upload(m_host.k, p.dtype, m_stream);
  m_v = upload(m_host.v, p.dtype, m_stream);
  m_valid = true;
}

CheckVerdict ProblemCache::check(const KernelSpec& kernel, const std::vector<float>& out,
                                 const std::vector<float>& lse) {
  ensure_reference();
  // cuDNN's own bar does not judge cuDNN.
  const double* cudnn = m_cudnn_rel_l2 && kernel.id != "cudnn.sdpa" ? &*m_cudnn_rel_l2 : nullptr;
  std::optional<StatedBound> stated;
  if (kernel.stated_bound) stated = kernel.stated_bound(m_problem);
  CheckVerdict v = evaluate_output(m_problem.dtype, out, m_ref_o, lse, m_ref_lse, cudnn, m_reference,
                                   stated ? &*stated : nullptr);
  if (!m_rows.empty()) add_sampled_rows(out, v);
  return v;
}

void ProblemCache::ensure_reference() {
  if (m_has_reference) return;
  compute_reference();
  measure_cudnn_error();
  m_has_reference = true;
}

void ProblemCache::compute_reference() {
  const Problem& p = m_problem;
  const auto& in = m_host;
  const double scale = p.default_scale();
  if (p.flops() <= kCpuReferenceMaxFlops) {
    std::vector<double> o(static_cast<std::size_t>(p.o_elems()));
    m_ref_lse.assign(static_cast<std::size_t>(p.lse_elems()), 0.0);
    cpu_reference_attention(p, in.q.data(), in.k.data(), in.v.data(), scale, o.data(), m_ref_lse.data());
    m_ref_o.assign(o.begin(), o.end());
    m_reference = "cpu.reference";
    return;
  }
  // cuda.reference on fp32 copies of the (already rounded) inputs, so its output is not rounded to fp16.
  const KernelSpec* ref = find_kernel("cuda.reference");
  if (!ref) throw KernelError("cuda.reference is missing from the registry");
  Problem p32 = p;
  p32.dtype = DType::fp32;
  if (auto why = ref->why_not(p32, {}); !why.empty())
    throw KernelError("cuda.reference refuses the case: " + why);
  auto kernel = ref->prepare(p32, {});
  const CaseBuffers b = allocate_case_buffers(p32, *kernel);
  {
    const DeviceBuffer q = upload(in.q, DType::fp32, m_stream), k = upload(in.k, DType::fp32, m_stream),
                       v = upload(in.v, DType::fp32, m_stream);
    run_once(*kernel, make_args(p32, q.get(), k.get(), v.get(), b, m_stream), b);
  }
  m_ref_o = download(b.o, DType::fp32, static_cast<std::size_t>(p.o_elems()), m_stream);
  const std::vector<float> lse =
      download(b.lse, DType::fp32, static_cast<std::size_t>(p.lse_elems()), m_stream);
  m_ref_lse.assign(lse.begin(), lse.end());

  // Sampled rows: cpu.reference checks cuda.reference, and later each kernel too.
  std::mt19937_64 rng(m_seed ^ 0x5A5A5A5Aull);
  for (int n = 0; n < kSampledRows; ++n) {
    RowIndex row{static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p.batch)),
                 static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p.heads_q)),
                 static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p.seq_q))};
    if (n == 0) row.i = p.seq_q - 1;  // always one last row: the causal edge and the tail tile
    m_rows.push_back(row);
  }
  m_rows_ref.assign(m_rows.size() * static_cast<std::size_t>(p.head_dim_v), 0.0);
  cpu_reference_rows(p, in.q.data(), in.k.data(), in.v.data(), scale, m_rows, m_rows_ref.data(), nullptr);
  const double ref_err = rows_rel_l2(m_ref_o);
  if (!(ref_err <= kCudaReferenceMaxRelL2))
    throw KernelError(
        fmt::format("cuda.reference disagrees with cpu.reference on {} sampled rows: rel_l2 {:.3e}",
                    m_rows.size(), ref_err));
  m_reference = fmt::format("cuda.reference (fp32) + cpu.reference on {} rows (agree to {:.1e})",
                            m_rows.size(), ref_err);
}

double ProblemCache::rows_rel_l2(const std::vector<float>& out) const {
  const Problem& p = m_problem;
  const std::int64_t dv = p.head_dim_v;
  std::vector<float> picked;
  picked.reserve(m_rows_ref.size());
  for (const RowIndex& row : m_rows) {
    const std::size_t base = static_cast<std::size_t>(((row.b * p.seq_q + row.i) * p.heads_q + row.h) * dv);
    picked.insert(picked.end(), out.begin() + static_cast<std::ptrdiff_t>(base),
                  out.begin() + static_cast<std::ptrdiff_t>(base) + dv);
  }
  return compare_outputs(picked, m_rows_ref).rel_l2;
}

void ProblemCache::add_sampled_rows(const std::vector<float>& out, CheckVerdict& v) const {
  const double err = rows_rel_l2(out);
  v.correctness.sampled_rows = static_cast<std::int64_t>(m_rows.size());
  v.correctness.sampled_rows_rel_l2 = err;
  if (v.correctness.pass && !(err <= v.correctness.tol)) {
    v.correctness.pass = false;
    v.reason =
        fmt::format("sampled rows against cpu.reference: rel_l2 {:.3e} > tol {:.3e}", err, v.correctness.tol);
  }
}

// The tolerance rule needs cuDNN's own error on these inputs (fp16/bf16 where cuDNN takes the case).
void ProblemCache::measure_cudnn_error() {
  const Problem& p = m_problem;
  const KernelSpec* dnn = find_kernel("cudnn.sdpa");
  if (!dnn || p.dtype == DType::fp32 || !dnn->why_not(p, {}).empty()) return;
  try {
    auto kernel = dnn->prepare(p, {});
    const CaseBuffers b = allocate_case_buffers(p, *kernel);
    run_once(*kernel, make_args(p, m_q.get(), m_k.get(), m_v.get(), b, m_stream), b);
    const std::vector<float> out = download(b.o, p.dtype, static_cast<std::size_t>(p.o_elems()), m_stream);
    const ErrorStats e = compare_outputs(out, m_ref_o);
    if (e.nonfinite == 0) m_cudnn_rel_l2 = e.rel_l2;
  } catch (const Unsupported&) {
    // cuDNN refuses the case: the dtype bound applies.
  } catch (const CudaError& e) {
    if (is_sticky(e.code())) throw;
  } catch (const KernelError&) {
    // A cuDNN failure here must not fail other kernels' checks: they fall back to the dtype bound.
  }
}

}  // namespace attn
