// cudnn.sdpa: cuDNN 9's fused flash-attention forward, reached through the backend graph API.
// The graph is the one cudnn-frontend lowers its composite `sdpa` node to for cuDNN < 9.21:
// matmul -> scale -> diagonal-band masks (gen_index/compare/select) -> softmax with stats -> matmul;
// cuDNN's fused SDPA engine pattern-matches it. Notes: docs/kernels/cudnn-sdpa.md.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/launch_checks.hpp"
#include "kernels/api/problem.hpp"
#include "kernels/api/sequence_views.hpp"
#include "kernels/common/device_int32_array.hpp"
#include "kernels/cudnn/cudnn_graph.hpp"
#include "kernels/cudnn/cudnn_sdpa_backward.hpp"
#include "kernels/cudnn/cudnn_sdpa_rows.hpp"
#include "kernels/cudnn/sdpa_graph.hpp"

namespace attn {
namespace {

using cudnn::Descriptor;
using cudnn::MaskPlan;
using cudnn::plan_mask;
using cudnn::version_text;

// cuDNN 9's fused fp16/bf16 SDPA forward on Ampere and Hopper: head dims up to 256, multiples of 8
// (cudnn-frontend's support surface: "hidden_dim should be multiple of 8"; d <= 256 on sm_8x/sm_9x).
constexpr std::int64_t kMaxHeadDim = 256;
constexpr std::int64_t kHeadDimMultiple = 8;
// Sub-buffers inside the caller's workspace start on this boundary [bytes].
constexpr std::size_t kWorkspaceAlign = 256;

// Tensor unique ids: the real (variant-pack) tensors are fixed; virtual ones count up from kFirstVirtual.
enum : std::int64_t {
  kUidQ = 1,
  kUidK,
  kUidV,
  kUidO,
  kUidStats,
  kUidScale,
  kUidSeqKv,
  kUidSeqQ,
  kUidRightShift,
  kUidNegInfRight,
  kUidLeftBound,
  kUidNegInfLeft,
  kUidSeqLenQ,
  kUidSeqLenKv,
  kUidRaggedQ,
  kUidRaggedK,
  kUidRaggedV,
  kUidRaggedO,
  kUidNegInfPadding,
  kFirstVirtual = 100,
};

std::string cudnn_sdpa_why_not(const Problem& p, const Knobs&) {
  if (std::string e = p.validate(); !e.empty()) return e;
  if (p.dtype != DType::fp16 && p.dtype != DType::bf16)
    return "dtype = " + std::string(to_string(p.dtype)) +
           ": cuDNN's fused SDPA forward takes fp16 or bf16 only (fp32 has no flash engine)";
  if (p.head_dim % kHeadDimMultiple != 0 || p.head_dim_v % kHeadDimMultiple != 0)
    return "head_dim = " + std::to_string(p.head_dim) + ", head_dim_v = " + std::to_string(p.head_dim_v) +
           ": cuDNN's fused SDPA needs both to be multiples of 8";
  if (p.head_dim > kMaxHeadDim || p.head_dim_v > kMaxHeadDim)
    return "head_dim = " + std::to_string(p.head_dim) + ", head_dim_v = " + std::to_string(p.head_dim_v) +
           ": cuDNN's fused fp16/bf16 SDPA forward takes at most 256 on Ampere/Hopper";
  if (p.seq_q > std::numeric_limits<std::int32_t>::max() ||
      p.seq_kv > std::numeric_limits<std::int32_t>::max())
    return "seq_q/seq_kv beyond int32: the mask's row/column indices are int32 in the cuDNN graph";
  const MaskPlan m = plan_mask(p);
  const bool masked = m.right || m.left;
  if (p.varlen.active()) {
    // One band for the whole batch: its diagonal offset (longest Sk - longest Sq) is each sequence's
    // only when every sequence has as many keys as queries.
    if (masked && p.varlen.q != p.varlen.kv)
      return "varlen with mask " + p.mask_label() +
             " and key lengths other than the query lengths: cudnn.sdpa's band has one diagonal for the "
             "batch, each sequence's only when q = kv per sequence";
    const std::int64_t widest = std::max(p.head_dim, p.head_dim_v) * std::max(p.heads_q, p.heads_kv);
    if (std::max(p.total_q(), p.total_kv()) * widest > std::numeric_limits<std::int32_t>::max())
      return "varlen: " + std::to_string(p.total_q()) + " query rows x " + std::to_string(widest) +
             " elements: cudnn.sdpa's ragged offsets are int32";
  }
  if (masked && m.seq_q > p.seq_kv) {
    std::string r = "mask " + p.mask_label() + " with seq_q = " + std::to_string(p.seq_q) +
                    " > seq_kv = " + std::to_string(p.seq_kv);
    if (m.skipped > 0)
      r += " (" + std::to_string(m.seq_q) + " rows left after dropping the rows that see no key)";
    return r + ": cuDNN's bottom-right diagonal band without a padding mask needs seq_q <= seq_kv";
  }
  const std::size_t version = cudnnGetVersion();
  if (masked && version < 90600)
    return "cuDNN " + version_text(version) +
           ": bottom-right masks for lengths that are not multiples of 64 need cuDNN 9.6.0 or newer";
  if (m.left && !m.right && version < 91002)
    return "window.left without a right bound on cuDNN " + version_text(version) +
           ": cuDNN before 9.10.2 takes a left bound only together with a right bound (causal)";
  if (m.left && !m.right && version == 91400 && p.seq_kv > 1024)
    return "window.left without a right bound and seq_kv = " + std::to_string(p.seq_kv) +
           " > 1024 on cuDNN 9.14.0: known wrong results in that release (fixed in 9.14.1)";
  return {};
}

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

// A varlen batch on the device (cudnn-frontend's ragged "THD" layout): each sequence's length for the
// padding mask and GEMM size overrides, each tensor's first element per sequence in place of the batch
// stride, and the query prefix sums for the LSE scatter (why_not keeps them all in int32).
struct VarlenTensors {
  DeviceInt32Array len_q, len_kv, ragged_q, ragged_k, ragged_v, ragged_o, cu_q;

  explicit VarlenTensors(const Problem& p)
      : len_q(lengths(p.varlen.q)),
        len_kv(lengths(p.varlen.kv)),
        ragged_q(int32_sequence_starts(p.varlen.q, p.heads_q * p.head_dim)),
        ragged_k(int32_sequence_starts(p.varlen.kv, p.heads_kv * p.head_dim)),
        ragged_v(int32_sequence_starts(p.varlen.kv, p.heads_kv * p.head_dim_v)),
        ragged_o(int32_sequence_starts(p.varlen.q, p.heads_q * p.head_dim_v)),
        cu_q(int32_sequence_starts(p.varlen.q)) {}

  static std::vector<std::int32_t> lengths(const std::vector<std::int64_t>& n) {
    return {n.begin(), n.end()};
  }
};

class CudnnSdpaKernel final : public PreparedKernel {
 public:
  explicit CudnnSdpaKernel(const Problem& p)
      : m_p(p), m_mask(plan_mask(p)), m_elem(static_cast<std::int64_t>(dtype_bytes(p.dtype))) {
    if (p.varlen.active()) m_varlen = std::make_unique<VarlenTensors>(p);
    m_handle = cudnn::thread_handle();
    build_graph();
    m_graph.build_plan(m_handle->get(), "cudnn.sdpa");
    const std::size_t stats_bytes =
        static_cast<std::size_t>(p.batch * p.heads_q * m_mask.seq_q) * sizeof(float);
    m_stats_offset = align_up(static_cast<std::size_t>(m_graph.plan_workspace()), kWorkspaceAlign);
    m_workspace_bytes = m_stats_offset + stats_bytes;
  }

  // The plan's own workspace, then room for the packed stats when they cannot go straight into
  // args.lse (no LSE wanted, or leading rows were cut off).
  std::size_t workspace_bytes() const override { return m_workspace_bytes; }
  bool writes_lse() const override { return true; }

  void run(const AttentionArgs& a) override {
    check_io_present(a, "cudnn.sdpa");
    check_workspace(a, m_workspace_bytes, "cudnn.sdpa");
    auto stream = static_cast<cudaStream_t>(a.stream);
    cudnn::check(cudnnSetStream(m_handle->get(), stream), "cudnnSetStream");

    char* ws = static_cast<char*>(a.workspace);
    const bool direct_lse = a.lse != nullptr && m_mask.skipped == 0 && !m_varlen;
    float* stats = direct_lse ? a.lse : reinterpret_cast<float*>(ws + m_stats_offset);
    const std::int64_t skipped = m_mask.skipped;
    const auto* q = static_cast<const char*>(a.q) + skipped * m_p.heads_q * m_p.head_dim * m_elem;
    auto* o = static_cast<char*>(a.o) + skipped * m_p.heads_q * m_p.head_dim_v * m_elem;
    float scale = a.scale;

    cudnn::VariantPack<20> add;
    add(kUidQ, q);
    add(kUidK, a.k);
    add(kUidV, a.v);
    add(kUidO, o);
    add(kUidStats, stats);
    add(kUidScale, &scale);
    add_mask_scalars(m_mask, m_scalars, add);
    if (m_varlen) {
      add(kUidSeqLenQ, m_varlen->len_q.get());
      add(kUidSeqLenKv, m_varlen->len_kv.get());
      add(kUidRaggedQ, m_varlen->ragged_q.get());
      add(kUidRaggedK, m_varlen->ragged_k.get());
      add(kUidRaggedV, m_varlen->ragged_v.get());
      add(kUidRaggedO, m_varlen->ragged_o.get());
      add(kUidNegInfPadding, &m_neg_inf);
    }
    m_graph.execute(m_handle->get(), add.uids(), add.ptrs(), ws);
    if (m_varlen && a.lse)
      cudnn::launch_scatter_varlen_lse(a.lse, stats, m_varlen->cu_q.get(), m_p.batch, m_p.heads_q, m_p.seq_q,
                                       a.stream);

    if (skipped > 0) {
      // O rows [0, skipped) of every batch: pitch is one batch of O [bytes].
      const auto pitch = static_cast<std::size_t>(m_p.seq_q * m_p.heads_q * m_p.head_dim_v * m_elem);
      const auto width = static_cast<std::size_t>(skipped * m_p.heads_q * m_p.head_dim_v * m_elem);
      const cudaError_t err =
          cudaMemset2DAsync(a.o, pitch, 0, width, static_cast<std::size_t>(m_p.batch), stream);
      if (err != cudaSuccess)
        throw KernelError(std::string("cudnn.sdpa: zeroing the O rows with no visible key failed: ") +
                          cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
      if (a.lse)
        cudnn::launch_scatter_lse(a.lse, stats, m_p.batch * m_p.heads_q, m_p.seq_q, skipped, a.stream);
    }
  }

 private:
  void build_graph() {
    const std::int64_t b = m_p.batch, hq = m_p.heads_q, hkv = m_p.heads_kv;
    const std::int64_t sq_full = m_p.seq_q, skv = m_p.seq_kv, d = m_p.head_dim, dv = m_p.head_dim_v;
    const std::int64_t sq = m_mask.seq_q;
    const cudnnDataType_t io = m_p.dtype == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;

    // BSHD memory seen as [B, H, S, D]; batch strides use the full seq_q so a sliced Q/O still walks
    // the caller's rows. K enters the first matmul transposed: [B, Hkv, D, Sk].
    using Kind = cudnn::GraphBuilder::Kind;
    cudnn::GraphBuilder& g = m_graph;
    // A varlen batch: the sequences' lengths and ragged offsets (sq and skv are the longest).
    const Descriptor *len_q = nullptr, *len_kv = nullptr;
    const Descriptor *rq = nullptr, *rk = nullptr, *rv = nullptr, *ro = nullptr;
    if (m_varlen) {
      auto ints = [&](const char* name, std::int64_t n, std::int64_t uid) {
        return &g.tensor(name, CUDNN_DATA_INT32, {n, 1, 1, 1}, {1, 1, 1, 1}, uid, Kind::real);
      };
      len_q = ints("seq_len_q", b, kUidSeqLenQ);
      len_kv = ints("seq_len_kv", b, kUidSeqLenKv);
      rq = ints("ragged offsets Q", b + 1, kUidRaggedQ);
      rk = ints("ragged offsets K", b + 1, kUidRaggedK);
      rv = ints("ragged offsets V", b + 1, kUidRaggedV);
      ro = ints("ragged offsets O", b + 1, kUidRaggedO);
    }
    const Descriptor& q =
        g.tensor("Q", io, {b, hq, sq, d}, {sq_full * hq * d, d, hq * d, 1}, kUidQ, Kind::real, rq);
    const Descriptor& kt =
        g.tensor("K^T", io, {b, hkv, d, skv}, {skv * hkv * d, d, 1, hkv * d}, kUidK, Kind::real, rk);
    const Descriptor& v =
        g.tensor("V", io, {b, hkv, skv, dv}, {skv * hkv * dv, dv, hkv * dv, 1}, kUidV, Kind::real, rv);
    const Descriptor& o =
        g.tensor("O", io, {b, hq, sq, dv}, {sq_full * hq * dv, dv, hq * dv, 1}, kUidO, Kind::real, ro);
    // cuDNN before 9.26 only writes packed [B, H, Sq, 1] stats, which is our LSE layout when nothing is cut.
    const Descriptor& stats =
        g.tensor("Stats", CUDNN_DATA_FLOAT, {b, hq, sq, 1}, {hq * sq, sq, 1, 1}, kUidStats, Kind::real);

    const std::vector<std::int64_t> score_dims{b, hq, sq, skv};
    const std::vector<std::int64_t> row_dims{b, hq, sq, 1};
    const Descriptor& s = g.virt("S = Q K^T", CUDNN_DATA_FLOAT, score_dims);
    g.matmul("bmm1", q, kt, s, len_q, len_kv);
    const Descriptor& scale = g.scalar("scale", CUDNN_DATA_FLOAT, kUidScale);
    const Descriptor& s_scaled = g.virt("S * scale", CUDNN_DATA_FLOAT, score_dims);
    g.pointwise("attn scale", CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, s, &scale, nullptr, s_scaled);
    const Descriptor* padded = &s_scaled;
    if (m_varlen) padded = &g.padding_mask(s_scaled, score_dims, *len_q, *len_kv, kUidNegInfPadding);

    const Descriptor* scores = &g.band_mask(*padded, score_dims, m_mask, sq, skv, m_scalars);

    // Softmax with stats = max + log(sum(exp(S - max))), the natural-log LSE.
    const Descriptor& mx = g.virt("row max", CUDNN_DATA_FLOAT, row_dims);
    g.reduction("max", CUDNN_REDUCE_TENSOR_MAX, *scores, mx);
    const Descriptor& centred = g.virt("S - max", CUDNN_DATA_FLOAT, score_dims);
    g.pointwise("sub max", CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, *scores, &mx, nullptr, centred);
    const Descriptor& e = g.virt("exp(S - max)", CUDNN_DATA_FLOAT, score_dims);
    g.pointwise("exp", CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, centred, nullptr, nullptr, e);
    const Descriptor& sum = g.virt("row sum", CUDNN_DATA_FLOAT, row_dims);
    g.reduction("sum", CUDNN_REDUCE_TENSOR_ADD, e, sum);
    const Descriptor& log_sum = g.virt("log row sum", CUDNN_DATA_FLOAT, row_dims);
    g.pointwise("log", CUDNN_POINTWISE_LOG, CUDNN_DATA_FLOAT, sum, nullptr, nullptr, log_sum);
    g.pointwise("stats", CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, mx, &log_sum, nullptr, stats);
    // P goes into the second matmul in the I/O type, as the fused engine expects.
    const Descriptor& prob = g.virt("P", io, score_dims);
    g.pointwise("normalise", CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, e, &sum, nullptr, prob);
    g.matmul("bmm2", prob, v, o, len_q, nullptr, len_kv);
  }

  Problem m_p;
  MaskPlan m_mask;
  std::int64_t m_elem;
  std::shared_ptr<cudnn::Handle> m_handle;
  cudnn::GraphBuilder m_graph{kFirstVirtual};
  std::size_t m_stats_offset = 0;
  std::size_t m_workspace_bytes = 0;
  std::unique_ptr<VarlenTensors> m_varlen;                    // varlen batches only
  float m_neg_inf = -std::numeric_limits<float>::infinity();  // the padding mask's by-value scalar
  // By-value mask scalars: the variant pack of every run points at these.
  cudnn::MaskScalars m_scalars{kUidSeqKv,       kUidSeqQ,      kUidRightShift,
                               kUidNegInfRight, kUidLeftBound, kUidNegInfLeft};
};

// A prepared problem's graph and plan, shared: the check's error bar (profiling/cuda/problem_cache.cpp)
// prepares cudnn.sdpa for a problem (on a host thread, while the GPU computes the reference), and the
// cudnn.sdpa case of the same problem follows it; building and finalizing the graph costs about
// 0.06 s each time, so the last plans built on each device are kept and handed out again. A plan and
// its handle are used by one thread at a time (the error bar, then the case), never concurrently.
// A problem whose pass has a backward also builds the backward's graph and plan here, at prepare.
class SharedCudnnSdpa final : public PreparedKernel {
 public:
  SharedCudnnSdpa(std::shared_ptr<CudnnSdpaKernel> k, std::unique_ptr<CudnnSdpaBackward> backward)
      : m_k(std::move(k)), m_backward(std::move(backward)) {}
  std::size_t workspace_bytes() const override { return m_k->workspace_bytes(); }
  bool writes_lse() const override { return m_k->writes_lse(); }
  void run(const AttentionArgs& a) override { m_k->run(a); }
  std::size_t backward_workspace_bytes() const override {
    return m_backward ? m_backward->workspace_bytes() : 0;
  }
  void run_backward(const BackwardArgs& a) override {
    if (!m_backward) throw KernelError("cudnn.sdpa: prepared for a forward pass, asked for its backward");
    m_backward->run(a);
  }

 private:
  std::shared_ptr<CudnnSdpaKernel> m_k;
  std::unique_ptr<CudnnSdpaBackward> m_backward;
};

std::shared_ptr<CudnnSdpaKernel> recent_plan(const Problem& p) {
  constexpr std::size_t kKept = 4;
  static std::mutex mutex;
  // Never destroyed: cuDNN handles must not be torn down after the CUDA runtime at exit.
  static auto& recent = *new std::deque<std::pair<std::string, std::shared_ptr<CudnnSdpaKernel>>>;
  int device = 0;
  if (const cudaError_t err = cudaGetDevice(&device); err != cudaSuccess)
    throw KernelError(std::string("cudnn.sdpa: cudaGetDevice failed: ") + cudaGetErrorName(err));
  std::string key = std::to_string(device) + " " + p.full_label();
  if (p.varlen.active())  // the plan's device tensors hold the lengths themselves
    for (std::size_t i = 0; i < p.varlen.q.size(); ++i) {
      key += ' ';
      key += std::to_string(p.varlen.q[i]);
      key += ',';
      key += std::to_string(p.varlen.kv[i]);
    }
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [k, plan] : recent)
    if (k == key) return plan;
  auto plan = std::make_shared<CudnnSdpaKernel>(p);
  recent.emplace_front(key, plan);
  if (recent.size() > kKept) recent.pop_back();
  return plan;
}

}  // namespace

KernelSpec make_cudnn_sdpa_spec() {
  KernelSpec s;
  s.id = "cudnn.sdpa";
  s.description =
      "cuDNN 9 fused flash attention via the backend graph API (bottom-right masks, LSE, varlen forward "
      "through ragged offsets), forward and backward";
  s.backend = Backend::cuda;
  s.why_not = cudnn_sdpa_why_not;
  s.backward_why_not = [](const Problem& p, const Knobs&) { return cudnn_sdpa_backward_why_not(p); };
  s.varlen = true;  // the forward (packed rows, ragged offsets); the backward refuses varlen
  s.prepare = [](const Problem& p, const Knobs& knobs) -> std::unique_ptr<PreparedKernel> {
    require_supported(cudnn_sdpa_why_not(p, knobs));
    std::unique_ptr<CudnnSdpaBackward> backward;
    if (has_backward(p.pass)) {
      require_supported(cudnn_sdpa_backward_why_not(p));
      backward = std::make_unique<CudnnSdpaBackward>(p);
    }
    Problem forward = p;  // the forward plan is the same for every pass: share it
    forward.pass = Pass::fwd;
    return std::make_unique<SharedCudnnSdpa>(recent_plan(forward), std::move(backward));
  };
  return s;
}

}  // namespace attn
