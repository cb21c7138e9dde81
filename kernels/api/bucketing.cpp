// Dense-bucketed execution (bucketing.hpp): the bucket plan, its padding cost and rules, and the
// wrapper that stages a varlen batch into padded dense batches for any kernel.
#include "kernels/api/bucketing.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "kernels/api/sequence_views.hpp"

#if ATTNSCOPE_HAS_CUDA
#include <cuda_runtime.h>

#include "kernels/common/cuda_check.hpp"
#endif

namespace attn {

std::vector<DenseBucket> dense_buckets(const Problem& p, std::int64_t bucket) {
  std::map<std::int64_t, DenseBucket> by_length;
  for (std::int64_t b = 0; b < p.batch; ++b) {
    const std::int64_t n = p.varlen.q[static_cast<std::size_t>(b)];
    const std::int64_t length = (n + bucket - 1) / bucket * bucket;
    DenseBucket& d = by_length[length];
    d.length = length;
    d.sequences.push_back(b);
  }
  std::vector<DenseBucket> out;
  for (auto& [length, d] : by_length) {
    d.problem = p;
    d.problem.varlen = {};
    d.problem.batch = static_cast<std::int64_t>(d.sequences.size());
    d.problem.seq_q = d.problem.seq_kv = length;
    // A compressed branch: the padded sequence's blocks; its real rows see only their own.
    if (p.compress.active()) d.problem.seq_kv = p.compress.key_rows(length);
    out.push_back(std::move(d));
  }
  return out;
}

PaddingCost padding_cost(const Problem& p, std::int64_t bucket) {
  PaddingCost c;
  c.real_rows = p.total_q();
  c.real_pairs = static_cast<double>(p.visible_pairs_per_head());
  for (const DenseBucket& d : dense_buckets(p, bucket)) {
    c.launched_rows += d.problem.total_q();
    // A dense problem counts the pairs of one batch element; a varlen one, of all its sequences.
    c.launched_pairs +=
        static_cast<double>(d.problem.batch) * static_cast<double>(d.problem.visible_pairs_per_head());
  }
  return c;
}

std::string bucketing_why_not(const Problem& p, std::int64_t bucket) {
  const std::string what = "bucket = " + std::to_string(bucket);
  if (bucket < 1 || bucket > kMaxBucket)
    return what + ": a bucket is 1 to " + std::to_string(kMaxBucket) + " rows (0 = the kernel's own path)";
  if (!p.varlen.active())
    return what + ": dense-bucketed execution is for varlen batches; this problem is dense (set varlen)";
  if (p.compress.active()) {  // keys are each sequence's blocks, and no row sees a later one
    for (std::size_t b = 0; b < p.varlen.q.size(); ++b)
      if (p.varlen.kv[b] != p.compress.key_rows(p.varlen.q[b]))
        return what + ": a compressed branch's sequence " + std::to_string(b) + " has " +
               std::to_string(p.varlen.kv[b]) + " keys, not the blocks of its " +
               std::to_string(p.varlen.q[b]) + " positions";
    return {};
  }
  if (p.varlen.q != p.varlen.kv)
    return what +
           ": padding at each sequence's end is exact only when its queries and keys are the "
           "same rows (varlen q = kv lengths); this batch has other key lengths";
  if (!p.causal && p.window.right != 0)
    return what +
           ": padding at each sequence's end is exact only when no row sees keys to its right "
           "(causal, or window right = 0); this problem is " +
           p.mask_label();
  return {};
}

Knobs kernel_knobs(const Knobs& knobs) {
  Knobs k = knobs;
  k.erase(kBucketKnob);
  return k;
}

std::string bucketed_why_not(const KernelSpec& k, const Problem& p, const Knobs& knobs) {
  const std::int64_t bucket = knob_value(knobs, kBucketKnob);
  if (std::string why = bucketing_why_not(p, bucket); !why.empty()) return why;
  const Knobs inner = kernel_knobs(knobs);
  for (const DenseBucket& d : dense_buckets(p, bucket))
    if (std::string why = kernel_why_not(k, d.problem, inner); !why.empty())
      return "bucket of " + std::to_string(d.length) + " rows (" + std::to_string(d.sequences.size()) +
             " sequences): " + why;
  return {};
}

namespace {

// Bytes that every element starts as: 0xFF is NaN in fp16, bf16 and fp32, the engines' poison, so
// an O row or LSE a kernel leaves unwritten fails the check. Q, K and V start at zero: a padded key
// is masked, but its V row still meets P = 0 in the PV product, where NaN would spread and 0 does not.
constexpr unsigned char kPoison = 0xFF, kZero = 0x00;

// Memory on the kernel's side: device memory for CUDA kernels, host memory for CPU ones.
class Staging {
 public:
  Staging(Backend backend, std::size_t bytes, unsigned char fill) : m_backend(backend) {
    if (bytes == 0) return;
    if (m_backend == Backend::cpu) {
      m_host.assign(bytes, fill);
      m_data = m_host.data();
      return;
    }
#if ATTNSCOPE_HAS_CUDA
    ATTN_CUDA_CHECK(cudaMalloc(&m_data, bytes));
    if (const cudaError_t e = cudaMemset(m_data, fill, bytes); e != cudaSuccess) {
      (void)cudaFree(m_data);
      ATTN_CUDA_CHECK(e);
    }
#else
    throw KernelError("dense-bucketed execution of a CUDA kernel in a build without CUDA");
#endif
  }
  ~Staging() {
#if ATTNSCOPE_HAS_CUDA
    if (m_backend == Backend::cuda && m_data) (void)cudaFree(m_data);
#endif
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  char* get() const { return static_cast<char*>(m_data); }

 private:
  Backend m_backend;
  void* m_data = nullptr;
  std::vector<unsigned char> m_host;
};

// `height` rows of `width` bytes, `src_pitch` and `dst_pitch` apart, on the kernel's side (enqueued on
// `stream` for CUDA).
void copy_rows(Backend backend, void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
               std::size_t width, std::size_t height, void* stream) {
  if (width == 0 || height == 0) return;
  if (height == 1) dst_pitch = src_pitch = width;
  if (backend == Backend::cpu) {
    for (std::size_t r = 0; r < height; ++r)
      std::memcpy(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch,
                  width);
    return;
  }
#if ATTNSCOPE_HAS_CUDA
  ATTN_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, height, cudaMemcpyDeviceToDevice,
                                    static_cast<cudaStream_t>(stream)));
#else
  (void)stream;
  throw KernelError("dense-bucketed execution of a CUDA kernel in a build without CUDA");
#endif
}

class BucketedKernel final : public PreparedKernel {
 public:
  BucketedKernel(const KernelSpec& spec, const Problem& p, const Knobs& knobs)
      : m_problem(p),
        m_backend(spec.backend),
        m_q_starts(sequence_starts(p.varlen.q)),
        m_kv_starts(sequence_starts(p.varlen.kv)) {
    const Knobs inner = kernel_knobs(knobs);
    const std::int64_t bucket = knob_value(knobs, kBucketKnob);
    for (DenseBucket& d : dense_buckets(p, bucket)) {
      Batch b;
      b.kernel = spec.prepare(d.problem, inner);
      const Problem& dp = d.problem;
      const std::size_t e = dtype_bytes(dp.dtype);
      b.q = std::make_unique<Staging>(m_backend, static_cast<std::size_t>(dp.q_elems()) * e, kZero);
      b.k = std::make_unique<Staging>(m_backend, static_cast<std::size_t>(dp.k_elems()) * e, kZero);
      b.v = std::make_unique<Staging>(m_backend, static_cast<std::size_t>(dp.v_elems()) * e, kZero);
      b.o = std::make_unique<Staging>(m_backend, static_cast<std::size_t>(dp.o_elems()) * e, kPoison);
      if (b.kernel->writes_lse())
        b.lse = std::make_unique<Staging>(m_backend, static_cast<std::size_t>(dp.lse_elems()) * sizeof(float),
                                          kPoison);
      b.bucket = std::move(d);
      m_batches.push_back(std::move(b));
    }
  }

  std::size_t workspace_bytes() const override {
    std::size_t n = 0;
    for (const Batch& b : m_batches) n = std::max(n, b.kernel->workspace_bytes());
    return n;
  }
  bool writes_lse() const override { return !m_batches.empty() && m_batches.front().kernel->writes_lse(); }

  void copy_in(const AttentionArgs& a) override {
    const Problem& p = m_problem;
    const std::size_t e = dtype_bytes(p.dtype);
    const std::size_t q_row = static_cast<std::size_t>(p.heads_q * p.head_dim) * e;
    const std::size_t k_row = static_cast<std::size_t>(p.heads_kv * p.head_dim) * e;
    const std::size_t v_row = static_cast<std::size_t>(p.heads_kv * p.head_dim_v) * e;
    for (const Batch& b : m_batches) {
      const auto length = static_cast<std::size_t>(b.bucket.length);
      const auto kv_length = static_cast<std::size_t>(b.bucket.problem.seq_kv);  // = length but compressed
      for (std::size_t slot = 0; slot < b.bucket.sequences.size(); ++slot) {
        const auto s = static_cast<std::size_t>(b.bucket.sequences[slot]);
        const auto n = static_cast<std::size_t>(p.varlen.q[s]),
                   n_kv = static_cast<std::size_t>(p.varlen.kv[s]);
        const auto qs = static_cast<std::size_t>(m_q_starts[s]);
        const auto ks = static_cast<std::size_t>(m_kv_starts[s]);
        copy_rows(m_backend, b.q->get() + slot * length * q_row, 0,
                  static_cast<const char*>(a.q) + qs * q_row, 0, n * q_row, 1, a.stream);
        copy_rows(m_backend, b.k->get() + slot * kv_length * k_row, 0,
                  static_cast<const char*>(a.k) + ks * k_row, 0, n_kv * k_row, 1, a.stream);
        copy_rows(m_backend, b.v->get() + slot * kv_length * v_row, 0,
                  static_cast<const char*>(a.v) + ks * v_row, 0, n_kv * v_row, 1, a.stream);
      }
    }
  }

  void run(const AttentionArgs& a) override {
    for (const Batch& b : m_batches) b.kernel->run(batch_args(b, a));
  }

  // Each batch's O rows and LSE blocks back to their places in the packed tensors. With more than
  // one batch, the kernels that keep outputs in memory of their own (a Python callable) hold only
  // the last batch's, so each batch runs again here first: outside the timed runs.
  void copy_out(const AttentionArgs& a) override {
    const Problem& p = m_problem;
    const std::size_t e = dtype_bytes(p.dtype);
    const std::size_t o_row = static_cast<std::size_t>(p.heads_q * p.head_dim_v) * e;
    const auto heads = static_cast<std::size_t>(p.heads_q);
    for (const Batch& b : m_batches) {
      const AttentionArgs ba = batch_args(b, a);
      if (m_batches.size() > 1) b.kernel->run(ba);
      b.kernel->copy_out(ba);
      const auto length = static_cast<std::size_t>(b.bucket.length);
      for (std::size_t slot = 0; slot < b.bucket.sequences.size(); ++slot) {
        const std::int64_t s = b.bucket.sequences[slot];
        const auto n = static_cast<std::size_t>(p.varlen.q[static_cast<std::size_t>(s)]);
        const auto qs = static_cast<std::size_t>(m_q_starts[static_cast<std::size_t>(s)]);
        copy_rows(m_backend, static_cast<char*>(a.o) + qs * o_row, 0, b.o->get() + slot * length * o_row, 0,
                  n * o_row, 1, a.stream);
        if (a.lse && b.lse) {
          // [Hq, n] at Hq x the sequence's start, from the batch's [Hq, length] at slot x Hq x length.
          auto* dst = reinterpret_cast<char*>(a.lse + qs * heads);
          const char* src = b.lse->get() + slot * heads * length * sizeof(float);
          copy_rows(m_backend, dst, n * sizeof(float), src, length * sizeof(float), n * sizeof(float), heads,
                    a.stream);
        }
      }
    }
  }

 private:
  struct Batch {
    DenseBucket bucket;
    std::unique_ptr<PreparedKernel> kernel;
    std::unique_ptr<Staging> q, k, v, o, lse;
  };

  static AttentionArgs batch_args(const Batch& b, const AttentionArgs& a) {
    AttentionArgs ba = a;
    ba.q = b.q->get();
    ba.k = b.k->get();
    ba.v = b.v->get();
    ba.o = b.o->get();
    ba.lse = a.lse && b.lse ? reinterpret_cast<float*>(b.lse->get()) : nullptr;
    return ba;
  }

  Problem m_problem;
  Backend m_backend;
  std::vector<std::int64_t> m_q_starts, m_kv_starts;  // each sequence's first query and key row
  std::vector<Batch> m_batches;
};

}  // namespace

std::unique_ptr<PreparedKernel> prepare_kernel(const KernelSpec& spec, const Problem& p, const Knobs& knobs) {
  if (knob_value(knobs, kBucketKnob) == 0) return spec.prepare(p, knobs);
  return std::make_unique<BucketedKernel>(spec, p, knobs);
}

}  // namespace attn
