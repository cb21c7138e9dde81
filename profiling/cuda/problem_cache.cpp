// Inputs, reference and cuDNN error bar of one problem, and the check against them
// (see problem_cache.hpp).
#include "profiling/cuda/problem_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <random>

#include "kernels/registry.hpp"
#include "profiling/cuda/case_buffers.hpp"
#include "profiling/cuda/cuda_status.hpp"
#include "profiling/cuda/cuda_stream.hpp"
#include "profiling/cuda/device_inputs.hpp"
#include "profiling/cuda/host_lane.hpp"
#include "profiling/engine/stage_trace.hpp"

namespace attn {

namespace {
// Above this many reference FLOPs the CPU oracle would take seconds: use cuda.reference on the
// whole output and cpu.reference on kSampledRows rows instead.
constexpr double kCpuReferenceMaxFlops = 2e9;
constexpr int kSampledRows = 48;
// The sampled rows come from this many (batch, head) pairs, so the host copies only their heads'
// Q, K and V (33 MB at S 16384, D 128, fp16) instead of the whole tensors.
constexpr int kSampledHeads = 4;
// cuda.reference (fp32 accumulation over fp32 copies of the inputs) must match the fp64 oracle to
// fp32 accuracy on the sampled rows, or it is not fit to be a reference.
constexpr double kCudaReferenceMaxRelL2 = 1e-4;

// "<step> 2x16x8192x128 causal": which problem a stage-trace line is about.
std::string trace_label(const Problem& p, const char* step) {
  if (!stage_trace_enabled()) return {};  // off: a span costs its branch only
  return fmt::format("{} {}x{}x{}x{} {}", step, p.batch, p.heads_q, p.seq_q, p.head_dim,
                     p.causal ? "causal" : "full");
}

// The inputs depend on the shapes, the dtype and the seed, not on the mask: a causal problem after
// its non-causal twin keeps them (the reference is the mask's own).
bool same_inputs(const Problem& a, const Problem& b) {
  return a.batch == b.batch && a.heads_q == b.heads_q && a.heads_kv == b.heads_kv && a.seq_q == b.seq_q &&
         a.seq_kv == b.seq_kv && a.head_dim == b.head_dim && a.head_dim_v == b.head_dim_v &&
         a.dtype == b.dtype && a.varlen == b.varlen;
}
// `n` values of type `t` at `src` as a new fp32 buffer (the references read fp32 copies of the
// rounded inputs, so their own output is not rounded to the dtype).
DeviceBuffer widened_fp32(const DeviceBuffer& src, DType t, std::int64_t n, cudaStream_t stream) {
  DeviceBuffer d(static_cast<std::size_t>(n) * sizeof(float));
  widen_to_fp32_on_device(src.get(), t, d.as<float>(), n, stream);
  return d;
}
}  // namespace

void ProblemCache::use(const Problem& pass_problem) {
  Problem p = pass_problem;
  p.pass = Pass::fwd;
  if (m_valid && m_problem == p) return;
  std::optional<Prefetch> prefetch = std::move(m_prefetch);
  PinnedBuffer pinned = std::move(m_pinned);  // the sampled rows' staging outlives problems
  if (m_valid && same_inputs(m_problem, p)) {
    ProblemCache kept(m_seed, m_stream);
    kept.m_q = std::move(m_q);
    kept.m_k = std::move(m_k);
    kept.m_v = std::move(m_v);
    kept.m_d_o = std::move(m_d_o);
    *this = std::move(kept);
  } else {
    // Drawn on the device by the host generator's formula (bit for bit); the host copies what
    // the CPU oracle needs when the reference is computed.
    *this = ProblemCache(m_seed, m_stream);
    const InputStreams keys = input_streams(m_seed);
    auto draw = [&](DeviceBuffer& d, std::int64_t n, std::uint64_t key) {
      d = DeviceBuffer(static_cast<std::size_t>(n) * dtype_bytes(p.dtype));
      generate_normal_on_device(d.get(), p.dtype, n, key, m_stream);
    };
    draw(m_q, p.q_elems(), keys.q);
    draw(m_k, p.k_elems(), keys.k);
    draw(m_v, p.v_elems(), keys.v);
    ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
  }
  m_problem = p;
  m_valid = true;
  m_pinned = std::move(pinned);
  if (prefetch && prefetch->problem == p) {
    m_cudnn_build = std::move(prefetch->build);
  } else {
    m_prefetch = std::move(prefetch);  // still ahead (or never coming: dropped at the next switch)
  }
}

const DeviceBuffer& ProblemCache::d_o() {
  if (!m_d_o.get()) {
    const Problem& p = m_problem;
    m_d_o = DeviceBuffer(static_cast<std::size_t>(p.o_elems()) * dtype_bytes(p.dtype));
    generate_normal_on_device(m_d_o.get(), p.dtype, p.o_elems(), input_streams(m_seed).d_o, m_stream);
    ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
  }
  return m_d_o;
}

GradErrors ProblemCache::gradient_errors(const CaseBuffers& b) const {
  const Problem& p = m_problem;
  auto error = [&](const DeviceBuffer& out, const DeviceBuffer& ref_dev, const std::vector<float>& ref,
                   std::int64_t n) {
    if (ref_dev.get()) return compare_on_device(out.get(), p.dtype, ref_dev.as<float>(), n, m_stream);
    return compare_outputs(download(out, p.dtype, static_cast<std::size_t>(n), m_stream), ref);
  };
  return {error(b.dq, m_ref_dq_dev, m_ref_dq, p.q_elems()), error(b.dk, m_ref_dk_dev, m_ref_dk, p.k_elems()),
          error(b.dv, m_ref_dv_dev, m_ref_dv, p.v_elems())};
}

GradVerdict ProblemCache::check_gradients(const KernelSpec& kernel, const CaseBuffers& b) {
  if (!m_has_gradients) {
    compute_gradients();
    measure_cudnn_gradient_error();
  }
  const GradErrors* cudnn = m_cudnn_grad && kernel.id != "cudnn.sdpa" ? &*m_cudnn_grad : nullptr;
  return evaluate_gradients(m_problem.dtype, gradient_errors(b), cudnn, m_grad_reference);
}

// cuDNN's own gradient errors on these inputs, for the rule (where its backward takes the problem).
void ProblemCache::measure_cudnn_gradient_error() {
  Problem p = m_problem;
  p.pass = Pass::bwd;
  const KernelSpec* dnn = find_kernel("cudnn.sdpa");
  if (!dnn || p.dtype == DType::fp32 || !kernel_why_not(*dnn, p, {}).empty() ||
      !backward_why_not(*dnn, p, {}).empty())
    return;
  try {
    auto kernel = dnn->prepare(p, {});
    const CaseBuffers b = allocate_case_buffers(p, *kernel);
    const AttentionArgs args = make_args(p, m_q.get(), m_k.get(), m_v.get(), b, m_stream);
    run_once(*kernel, args, b);
    run_backward_once(*kernel, make_backward_args(args, d_o().get(), b), b);
    const GradErrors e = gradient_errors(b);
    if (e.dq.nonfinite == 0 && e.dk.nonfinite == 0 && e.dv.nonfinite == 0) m_cudnn_grad = e;
  } catch (const Unsupported&) {
    // cuDNN's backward refuses the problem: the gradient bound applies.
  } catch (const CudaError& e) {
    if (is_sticky(e.code())) throw;
  } catch (const KernelError&) {
    // A cuDNN failure here must not fail other kernels' checks.
  }
}

void ProblemCache::compute_gradients() {
  const Problem& p = m_problem;
  const DeviceBuffer& grad_out = d_o();
  if (p.forward_flops() * pass_flop_factor(Pass::bwd) <= kCpuReferenceMaxFlops) {
    HostInputs in;
    in.q = download(m_q, p.dtype, static_cast<std::size_t>(p.q_elems()), m_stream);
    in.k = download(m_k, p.dtype, static_cast<std::size_t>(p.k_elems()), m_stream);
    in.v = download(m_v, p.dtype, static_cast<std::size_t>(p.v_elems()), m_stream);
    const std::vector<float> host_d_o =
        download(grad_out, p.dtype, static_cast<std::size_t>(p.o_elems()), m_stream);
    std::vector<double> dq(static_cast<std::size_t>(p.q_elems())), dk(static_cast<std::size_t>(p.k_elems())),
        dv(static_cast<std::size_t>(p.v_elems()));
    cpu_reference_backward(p, in.q.data(), in.k.data(), in.v.data(), host_d_o.data(), p.default_scale(),
                           dq.data(), dk.data(), dv.data());
    m_ref_dq.assign(dq.begin(), dq.end());
    m_ref_dk.assign(dk.begin(), dk.end());
    m_ref_dv.assign(dv.begin(), dv.end());
    m_grad_reference = "cpu.reference";
  } else {
    // cuda.reference's forward and backward on fp32 copies of the inputs and of dO, as for O.
    const KernelSpec* ref = find_kernel("cuda.reference");
    if (!ref) throw KernelError("cuda.reference is missing from the registry");
    Problem p32 = p;
    p32.dtype = DType::fp32;
    p32.pass = Pass::bwd;
    if (auto why = backward_why_not(*ref, p32, {}); !why.empty())
      throw Unsupported("no reference gradients for this problem: " + why);
    auto kernel = ref->prepare(p32, {});
    CaseBuffers b = allocate_case_buffers(p32, *kernel);
    auto widened = [&](const DeviceBuffer& src, std::int64_t n) {
      return widened_fp32(src, p.dtype, n, m_stream);
    };
    const DeviceBuffer q = widened(m_q, p.q_elems()), k = widened(m_k, p.k_elems()),
                       v = widened(m_v, p.v_elems()), d_o32 = widened(grad_out, p.o_elems());
    const AttentionArgs args = make_args(p32, q.get(), k.get(), v.get(), b, m_stream);
    run_once(*kernel, args, b);
    run_backward_once(*kernel, make_backward_args(args, d_o32.get(), b), b);
    m_ref_dq_dev = std::move(b.dq);
    m_ref_dk_dev = std::move(b.dk);
    m_ref_dv_dev = std::move(b.dv);
    m_grad_reference = "cuda.reference (fp32)";
  }
  m_has_gradients = true;
}

ErrorStats ProblemCache::output_error(const DeviceBuffer& out) const {
  const Problem& p = m_problem;
  if (m_ref_dev.get())
    return compare_on_device(out.get(), p.dtype, m_ref_dev.as<float>(), p.o_elems(), m_stream);
  return compare_outputs(download(out, p.dtype, static_cast<std::size_t>(p.o_elems()), m_stream), m_ref_o);
}

CheckVerdict ProblemCache::check(const KernelSpec& kernel, const DeviceBuffer& out,
                                 const std::vector<float>& lse) {
  ensure_reference();
  // cuDNN's own bar does not judge cuDNN.
  const double* cudnn = m_cudnn_rel_l2 && kernel.id != "cudnn.sdpa" ? &*m_cudnn_rel_l2 : nullptr;
  std::optional<StatedBound> stated;
  if (kernel.stated_bound) stated = kernel.stated_bound(m_problem);
  CheckVerdict v = evaluate_output(m_problem.dtype, output_error(out), lse, m_ref_lse, cudnn, m_reference,
                                   stated ? &*stated : nullptr);
  if (!m_rows.empty()) add_sampled_rows(out, v);
  return v;
}

void ProblemCache::ensure_reference() {
  if (m_has_reference) return;
  // cuDNN's graph for the error bar is built on a host thread while the GPU computes the reference
  // (the cudnn.sdpa case of this problem then reuses it).
  const StageTrace trace(trace_label(m_problem, "reference"));
  start_cudnn_build();
  compute_reference();
  measure_cudnn_error(std::move(m_cudnn_build));
  m_has_reference = true;
}

void ProblemCache::start_cudnn_build() {
  if (m_cudnn_build.valid() || m_has_reference) return;
  m_cudnn_build = prepare_cudnn_async(m_problem);
}

void ProblemCache::prefetch_cudnn_build(const Problem& next) {
  Problem p = next;
  p.pass = Pass::fwd;
  if (p == m_problem || (m_prefetch && m_prefetch->problem == p)) return;
  m_prefetch = Prefetch{p, prepare_cudnn_async(p)};
}

void ProblemCache::compute_reference() {
  const Problem& p = m_problem;
  const double scale = p.default_scale();
  if (p.flops() <= kCpuReferenceMaxFlops) {
    HostInputs in;
    in.q = download(m_q, p.dtype, static_cast<std::size_t>(p.q_elems()), m_stream);
    in.k = download(m_k, p.dtype, static_cast<std::size_t>(p.k_elems()), m_stream);
    in.v = download(m_v, p.dtype, static_cast<std::size_t>(p.v_elems()), m_stream);
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
  if (auto why = kernel_why_not(*ref, p32, {}); !why.empty())
    throw KernelError("cuda.reference refuses the case: " + why);
  auto kernel = ref->prepare(p32, {});
  CaseBuffers b = allocate_case_buffers(p32, *kernel);
  {
    auto widened = [&](const DeviceBuffer& src, std::int64_t n) {
      return widened_fp32(src, p.dtype, n, m_stream);
    };
    const DeviceBuffer q = widened(m_q, p.q_elems()), k = widened(m_k, p.k_elems()),
                       v = widened(m_v, p.v_elems());
    // Sampled rows (cpu.reference checks cuda.reference, and later each kernel too): their copies
    // are enqueued first (m_pinned grows before the kernel starts: freeing pinned memory would wait
    // for it), then copied and computed on the host while the GPU computes the reference (q, k and
    // v stay allocated until it is done, for the same reason).
    const CudaStream copies;
    const std::vector<SampledHead> heads = fetch_sample_heads(copies.get());
    poison(b, m_stream);
    kernel->run(make_args(p32, q.get(), k.get(), v.get(), b, m_stream));
    ATTN_CUDA_CHECK(cudaGetLastError());
    std::optional<StageTrace> trace(std::in_place, trace_label(p, "reference.sample_copies"));
    ATTN_CUDA_CHECK(cudaStreamSynchronize(copies.get()));
    trace.emplace(trace_label(p, "reference.sampled_rows"));
    compute_sample_rows(heads);
    trace.emplace(trace_label(p, "reference.kernel_wait"));
    ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
  }
  const std::vector<float> lse =
      download(b.lse, DType::fp32, static_cast<std::size_t>(p.lse_elems()), m_stream);
  m_ref_lse.assign(lse.begin(), lse.end());
  m_ref_dev = std::move(b.o);
  const double ref_err = rows_rel_l2(m_ref_dev.get(), DType::fp32);
  if (!(ref_err <= kCudaReferenceMaxRelL2))
    throw KernelError(
        fmt::format("cuda.reference disagrees with cpu.reference on {} sampled rows: rel_l2 {:.3e}",
                    m_rows.size(), ref_err));
  m_reference = fmt::format("cuda.reference (fp32) + cpu.reference on {} rows (agree to {:.1e})",
                            m_rows.size(), ref_err);
}

// kSampledRows rows of kSampledHeads (batch, head) pairs, one of them the last row (the causal edge
// and the tail tile), and copies of those heads alone (a head is a problem of batch 1 and one head
// with the same lengths and mask) into m_pinned, enqueued on `copies`: page-locked memory and a
// stream of their own, so the copy engines move them while the reference kernel runs.
std::vector<ProblemCache::SampledHead> ProblemCache::fetch_sample_heads(cudaStream_t copies) {
  const Problem& p = m_problem;
  std::mt19937_64 rng(m_seed ^ 0x5A5A5A5Aull);
  const std::int64_t head_count = std::min<std::int64_t>(kSampledHeads, p.batch * p.heads_q);
  std::vector<std::pair<std::int64_t, std::int64_t>> picked;  // (b, h)
  while (static_cast<std::int64_t>(picked.size()) < head_count) {
    const std::pair<std::int64_t, std::int64_t> bh{
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p.batch)),
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p.heads_q))};
    if (std::find(picked.begin(), picked.end(), bh) == picked.end()) picked.push_back(bh);
  }
  const std::int64_t group = p.heads_q / p.heads_kv;
  const std::size_t elem = dtype_bytes(p.dtype);
  std::vector<SampledHead> heads;
  std::size_t total = 0;
  const int per_head = (kSampledRows + static_cast<int>(head_count) - 1) / static_cast<int>(head_count);
  for (std::size_t n = 0; n < picked.size(); ++n) {
    SampledHead s;
    s.b = picked[n].first;
    s.h = picked[n].second;
    // Sequence b of the batch (of a varlen one: its own lengths) as a problem of one head.
    s.one = p.sequence(s.b);
    s.one.heads_q = s.one.heads_kv = 1;
    const auto place = [&](Slice& slice, std::int64_t rows, std::int64_t width) {
      slice.offset = total;
      slice.count = static_cast<std::size_t>(rows * width);
      total += slice.count * elem;
    };
    place(s.q, s.one.seq_q, p.head_dim);
    place(s.k, s.one.seq_kv, p.head_dim);
    place(s.v, s.one.seq_kv, p.head_dim_v);
    for (int r = 0; r < per_head && static_cast<int>(m_rows.size()) < kSampledRows; ++r) {
      const std::int64_t i = n == 0 && r == 0
                                 ? s.one.seq_q - 1
                                 : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.one.seq_q));
      s.rows.push_back({0, 0, i});
      m_rows.push_back({s.b, s.h, i});
    }
    heads.push_back(std::move(s));
  }
  m_pinned.reserve(total);
  // Rows [first, first + rows) x `width` elements of head `h` in a BSHD (or packed varlen) tensor
  // with `heads` heads, packed at `slice`.
  auto copy_head = [&](const Slice& slice, const DeviceBuffer& t, std::int64_t first, std::int64_t h,
                       std::int64_t heads_in, std::int64_t width) {
    const std::size_t row_bytes = static_cast<std::size_t>(width) * elem;
    const std::size_t offset = static_cast<std::size_t>((first * heads_in + h) * width) * elem;
    ATTN_CUDA_CHECK(cudaMemcpy2DAsync(
        m_pinned.get() + slice.offset, row_bytes, static_cast<const std::uint8_t*>(t.get()) + offset,
        static_cast<std::size_t>(heads_in * width) * elem, row_bytes,
        slice.count / static_cast<std::size_t>(width), cudaMemcpyDeviceToHost, copies));
  };
  for (const SampledHead& s : heads) {
    copy_head(s.q, m_q, p.q_start(s.b), s.h, p.heads_q, p.head_dim);
    copy_head(s.k, m_k, p.kv_start(s.b), s.h / group, p.heads_kv, p.head_dim);
    copy_head(s.v, m_v, p.kv_start(s.b), s.h / group, p.heads_kv, p.head_dim_v);
  }
  return heads;
}

// cpu.reference on the sampled rows, from fetch_sample_heads' copies (complete on entry).
void ProblemCache::compute_sample_rows(const std::vector<SampledHead>& heads) {
  const Problem& p = m_problem;
  const std::int64_t dv = p.head_dim_v, group = p.heads_q / p.heads_kv;
  const auto unpack = [&](const Slice& slice) {
    return unpack_from(p.dtype, m_pinned.get() + slice.offset, slice.count);
  };
  for (const SampledHead& s : heads) {
    const std::vector<float> q = unpack(s.q), k = unpack(s.k), v = unpack(s.v);
    std::vector<double> out(s.rows.size() * static_cast<std::size_t>(dv));
    cpu_reference_rows(s.one, q.data(), k.data(), v.data(), p.default_scale(), s.rows, out.data(), nullptr,
                       SliceOrigin{&p, s.b, s.h / group});
    m_rows_ref.insert(m_rows_ref.end(), out.begin(), out.end());
  }
}

double ProblemCache::rows_rel_l2(const void* out, DType t) const {
  const Problem& p = m_problem;
  const std::int64_t dv = p.head_dim_v;
  const std::size_t elem = dtype_bytes(t), row_bytes = static_cast<std::size_t>(dv) * elem;
  std::vector<std::uint8_t> bytes(m_rows.size() * row_bytes);
  for (std::size_t n = 0; n < m_rows.size(); ++n) {
    const RowIndex& row = m_rows[n];
    const std::size_t base = static_cast<std::size_t>(((p.q_start(row.b) + row.i) * p.heads_q + row.h) * dv);
    ATTN_CUDA_CHECK(cudaMemcpyAsync(bytes.data() + n * row_bytes,
                                    static_cast<const std::uint8_t*>(out) + base * elem, row_bytes,
                                    cudaMemcpyDeviceToHost, m_stream));
  }
  ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
  return compare_outputs(unpack_from(t, bytes.data(), m_rows.size() * static_cast<std::size_t>(dv)),
                         m_rows_ref)
      .rel_l2;
}

void ProblemCache::add_sampled_rows(const DeviceBuffer& out, CheckVerdict& v) const {
  const double err = rows_rel_l2(out.get(), m_problem.dtype);
  v.correctness.sampled_rows = static_cast<std::int64_t>(m_rows.size());
  v.correctness.sampled_rows_rel_l2 = err;
  if (v.correctness.pass && !(err <= v.correctness.tol)) {
    v.correctness.pass = false;
    v.reason =
        fmt::format("sampled rows against cpu.reference: rel_l2 {:.3e} > tol {:.3e}", err, v.correctness.tol);
  }
}

std::future<std::unique_ptr<PreparedKernel>> ProblemCache::prepare_cudnn_async(const Problem& p) const {
  const KernelSpec* dnn = find_kernel("cudnn.sdpa");
  if (!dnn || p.dtype == DType::fp32 || !kernel_why_not(*dnn, p, {}).empty()) return {};
  int device = 0;
  ATTN_CUDA_CHECK(cudaGetDevice(&device));
  // Never destroyed: at exit its thread just stops, and nothing is torn down after the CUDA runtime.
  static HostLane* lane = new HostLane;
  return lane->submit(device, [dnn, p] {
    const StageTrace trace(trace_label(p, "reference.cudnn_build_on_host_lane"));
    return dnn->prepare(p, {});
  });
}

// The tolerance rule needs cuDNN's own error on these inputs (fp16/bf16 where cuDNN takes the case).
void ProblemCache::measure_cudnn_error(std::future<std::unique_ptr<PreparedKernel>> prepared) {
  const Problem& p = m_problem;
  if (!prepared.valid()) return;
  try {
    std::optional<StageTrace> trace(std::in_place, trace_label(p, "reference.cudnn_wait"));
    auto kernel = prepared.get();
    trace.emplace(trace_label(p, "reference.cudnn_error"));
    const CaseBuffers b = allocate_case_buffers(p, *kernel);
    run_once(*kernel, make_args(p, m_q.get(), m_k.get(), m_v.get(), b, m_stream), b);
    const ErrorStats e = output_error(b.o);
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
