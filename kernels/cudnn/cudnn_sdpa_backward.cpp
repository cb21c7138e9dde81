// cudnn.sdpa's backward (see cudnn_sdpa_backward.hpp). The graph, in cudnn-frontend's order:
//   D = sum(dO * O) (a real fp32 tensor in our workspace), S = Q K^T * scale - Stats, the same band
//   masks as the forward, P = exp(S); dV = P^T dO; dP = dO V^T; dS = P * (dP - D) * scale;
//   dK = dS^T Q; dQ = dS K through an fp32 accumulator (real, in our workspace), copied to dQ.
// P^T, dS^T and K are reshapes (strided views, P^T and dS^T in the I/O type). With GQA/MQA dK and
// dV are produced per query head and reduced over each KV group. cuDNN's fused backward engine
// pattern-matches this topology, so it follows the frontend exactly.
#include "kernels/cudnn/cudnn_sdpa_backward.hpp"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/api/launch_checks.hpp"
#include "kernels/cudnn/cudnn_sdpa_rows.hpp"
#include "kernels/cudnn/sdpa_graph.hpp"

namespace attn {

namespace {

using cudnn::Descriptor;
using Kind = cudnn::GraphBuilder::Kind;

constexpr std::size_t kWorkspaceAlign = 256;

enum : std::int64_t {
  kUidQ = 1,
  kUidK,
  kUidV,
  kUidO,
  kUidDo,
  kUidStats,
  kUidDq,
  kUidDk,
  kUidDv,
  kUidRowSums,
  kUidDqAccum,
  kUidScale,
  kUidOne,
  kUidSeqKv,
  kUidSeqQ,
  kUidRightShift,
  kUidNegInfRight,
  kUidLeftBound,
  kUidNegInfLeft,
  kUidSeqLenQ,
  kUidSeqLenKv,
  kUidNegInfPadding,
  kFirstVirtual = 100,
};

std::size_t align_up(std::size_t n) { return (n + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign; }

}  // namespace

std::string cudnn_sdpa_backward_why_not(const Problem& p) {
  const std::size_t version = cudnnGetVersion();
  if (version < 90000)
    return "cuDNN " + cudnn::version_text(version) + ": the fused SDPA backward needs cuDNN 9";
  if (version == 91000 || version == 91001)
    return "cuDNN " + cudnn::version_text(version) + ": cudnn-frontend blocks its SDPA backward (known bugs)";
  if (p.varlen.active())
    return "varlen (" + std::to_string(p.batch) +
           " sequences): cudnn.sdpa's backward takes dense batches only (its forward takes varlen)";
  if (p.seq_q == 1 && p.seq_kv == 1)
    return "seq_q = seq_kv = 1: cuDNN's SDPA backward refuses a 1x1 score matrix";
  const cudnn::MaskPlan m = cudnn::plan_mask(p);
  if (m.skipped > 0)
    return "mask " + p.mask_label() + " with seq_q = " + std::to_string(p.seq_q) +
           " > seq_kv = " + std::to_string(p.seq_kv) + ": " + std::to_string(m.skipped) +
           " leading rows see no key; the backward does not cut them off yet (the forward does)";
  return {};
}

struct CudnnSdpaBackward::Graph {
  Problem p;
  cudnn::MaskPlan mask;
  std::shared_ptr<cudnn::Handle> handle;
  cudnn::GraphBuilder g{kFirstVirtual};
  cudnn::MaskScalars scalars{kUidSeqKv,       kUidSeqQ,      kUidRightShift,
                             kUidNegInfRight, kUidLeftBound, kUidNegInfLeft};
  float one_value = 1.0f;
  // cuDNN up to 9.15.0 computes a wrong backward when seq_kv is not a multiple of 128 unless the graph
  // has a padding mask (cudnn-frontend turns one on by itself there): per-batch sequence lengths as
  // int32 device tensors in our workspace, the mask on the scores and GEMM size overrides.
  bool padding = false;
  float neg_inf = -std::numeric_limits<float>::infinity();
  std::size_t seq_lens_offset = 0;  // by value: D is scaled by 1 (no dropout), as the frontend builds it
  std::size_t row_sums_offset = 0, plan_offset = 0, bytes = 0;

  explicit Graph(const Problem& problem) : p(problem), mask(cudnn::plan_mask(problem)) {
    padding = cudnnGetVersion() <= 91500 && p.seq_kv % 128 != 0;
    handle = cudnn::thread_handle();
    build();
    g.build_plan(handle->get(), "cudnn.sdpa (backward)");
    const std::size_t accum =
        static_cast<std::size_t>(p.batch * p.heads_q * p.seq_q * p.head_dim) * sizeof(float);
    const std::size_t sums = static_cast<std::size_t>(p.batch * p.heads_q * p.seq_q) * sizeof(float);
    row_sums_offset = align_up(accum);
    seq_lens_offset = align_up(row_sums_offset + sums);
    const std::size_t seq_lens = padding ? 2 * static_cast<std::size_t>(p.batch) * sizeof(std::int32_t) : 0;
    plan_offset = align_up(seq_lens_offset + seq_lens);
    bytes = plan_offset + static_cast<std::size_t>(g.plan_workspace());
  }

  void build() {
    const std::int64_t b = p.batch, hq = p.heads_q, hkv = p.heads_kv;
    const std::int64_t sq = p.seq_q, skv = p.seq_kv, d = p.head_dim, dv = p.head_dim_v;
    const cudnnDataType_t io = p.dtype == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;

    // BSHD memory seen as [B, H, S, D]; K and V enter transposed ([B, Hkv, D, Sk]).
    const Descriptor& q = g.tensor("Q", io, {b, hq, sq, d}, {sq * hq * d, d, hq * d, 1}, kUidQ, Kind::real);
    const Descriptor& kt =
        g.tensor("K^T", io, {b, hkv, d, skv}, {skv * hkv * d, d, 1, hkv * d}, kUidK, Kind::real);
    const Descriptor& vt =
        g.tensor("V^T", io, {b, hkv, dv, skv}, {skv * hkv * dv, dv, 1, hkv * dv}, kUidV, Kind::real);
    const std::vector<std::int64_t> o_dims{b, hq, sq, dv}, o_strides{sq * hq * dv, dv, hq * dv, 1};
    const Descriptor& o = g.tensor("O", io, o_dims, o_strides, kUidO, Kind::real);
    const Descriptor& d_o = g.tensor("dO", io, o_dims, o_strides, kUidDo, Kind::real);
    const std::vector<std::int64_t> row_dims{b, hq, sq, 1}, row_strides{hq * sq, sq, 1, 1};
    const Descriptor& stats = g.tensor("Stats", f32, row_dims, row_strides, kUidStats, Kind::real);
    const Descriptor& dq =
        g.tensor("dQ", io, {b, hq, sq, d}, {sq * hq * d, d, hq * d, 1}, kUidDq, Kind::real);
    const Descriptor& dk =
        g.tensor("dK", io, {b, hkv, skv, d}, {skv * hkv * d, d, hkv * d, 1}, kUidDk, Kind::real);
    const Descriptor& dv_t =
        g.tensor("dV", io, {b, hkv, skv, dv}, {skv * hkv * dv, dv, hkv * dv, 1}, kUidDv, Kind::real);
    const Descriptor& row_sums =
        g.tensor("D = sum(dO * O)", f32, row_dims, row_strides, kUidRowSums, Kind::real);
    const std::vector<std::int64_t> dq_dims{b, hq, sq, d};
    const Descriptor& dq_accum =
        g.tensor("dQ accumulator", f32, dq_dims, cudnn::packed_strides(dq_dims), kUidDqAccum, Kind::real);
    const Descriptor& scale = g.scalar("scale", f32, kUidScale);
    const Descriptor& one = g.scalar("one", f32, kUidOne);
    const Descriptor* len_q = nullptr;
    const Descriptor* len_kv = nullptr;
    if (padding) {
      len_q = &g.tensor("seq_len_q", CUDNN_DATA_INT32, {b, 1, 1, 1}, {1, 1, 1, 1}, kUidSeqLenQ, Kind::real);
      len_kv =
          &g.tensor("seq_len_kv", CUDNN_DATA_INT32, {b, 1, 1, 1}, {1, 1, 1, 1}, kUidSeqLenKv, Kind::real);
    }

    // D = sum over Dv of dO * O.
    const Descriptor& do_o = g.virt("dO * O", f32, o_dims);
    g.pointwise("mul dO O", CUDNN_POINTWISE_MUL, f32, d_o, &o, nullptr, do_o);
    const Descriptor& sum = g.virt("sum dO * O", f32, row_dims);
    g.reduction("reduce dO O", CUDNN_REDUCE_TENSOR_ADD, do_o, sum);
    g.pointwise("scale D", CUDNN_POINTWISE_MUL, f32, sum, &one, nullptr, row_sums);

    // P = exp(Q K^T * scale - Stats), masked.
    const std::vector<std::int64_t> score_dims{b, hq, sq, skv};
    const Descriptor& s = g.virt("S = Q K^T", f32, score_dims);
    g.matmul("Q K^T", q, kt, s, len_q, len_kv);
    const Descriptor& s_scaled = g.virt("S * scale", f32, score_dims);
    g.pointwise("attn scale", CUDNN_POINTWISE_MUL, f32, s, &scale, nullptr, s_scaled);
    const Descriptor& s_centred = g.virt("S - Stats", f32, score_dims);
    g.pointwise("sub stats", CUDNN_POINTWISE_SUB, f32, s_scaled, &stats, nullptr, s_centred);
    const Descriptor* s_padded = &s_centred;
    if (padding) s_padded = &g.padding_mask(s_centred, score_dims, *len_q, *len_kv, kUidNegInfPadding);
    const Descriptor& s_masked = g.band_mask(*s_padded, score_dims, mask, sq, skv, scalars);
    const Descriptor& prob = g.virt("P", f32, score_dims);
    g.pointwise("exp", CUDNN_POINTWISE_EXP, f32, s_masked, nullptr, nullptr, prob);

    // A [B, Hq, Sk, Sq] view of a [B, Hq, Sq, Sk] score tensor, in the I/O type.
    const std::vector<std::int64_t> t_dims{b, hq, skv, sq}, t_strides{hq * sq * skv, sq * skv, 1, skv};
    // grad = A^T B over the query rows, for each KV head: with GQA/MQA per query head, then summed
    // over each group (the frontend's dK/dV "fullhead" tensors and their reduction).
    auto kv_grad = [&](const std::string& name, const Descriptor& a_t, const Descriptor& rhs,
                       const Descriptor& grad, std::int64_t width) {
      if (hq == hkv) {
        g.matmul(name, a_t, rhs, grad, len_kv, nullptr, len_q);
        return;
      }
      const Descriptor& full = g.virt(name + " per query head", io, {b, hq, skv, width});
      g.matmul(name, a_t, rhs, full, len_kv, nullptr, len_q);
      g.reduction("reduce " + name + " heads", CUDNN_REDUCE_TENSOR_ADD, full, grad);
    };

    // dV = P^T dO.
    const Descriptor& prob_t = g.virt_strided("P^T", io, t_dims, t_strides);
    g.reshape("reshape P", prob, prob_t);
    kv_grad("P^T dO", prob_t, d_o, dv_t, dv);

    // dS = P * (dO V^T - D) * scale.
    const Descriptor& dp = g.virt("dP = dO V^T", f32, score_dims);
    g.matmul("dO V^T", d_o, vt, dp, len_q, len_kv);
    const Descriptor& dp_centred = g.virt("dP - D", f32, score_dims);
    g.pointwise("sub D", CUDNN_POINTWISE_SUB, f32, dp, &row_sums, nullptr, dp_centred);
    const Descriptor& ds_unscaled = g.virt("P * (dP - D)", f32, score_dims);
    g.pointwise("mul P", CUDNN_POINTWISE_MUL, f32, dp_centred, &prob, nullptr, ds_unscaled);
    const Descriptor& ds = g.virt("dS", f32, score_dims);
    g.pointwise("dS scale", CUDNN_POINTWISE_MUL, f32, ds_unscaled, &scale, nullptr, ds);

    // dK = dS^T Q.
    const Descriptor& ds_t = g.virt_strided("dS^T", io, t_dims, t_strides);
    g.reshape("reshape dS", ds, ds_t);
    kv_grad("dS^T Q", ds_t, q, dk, d);

    // dQ = dS K through the fp32 accumulator.
    const Descriptor& k = g.virt_strided("K", io, {b, hkv, skv, d}, {skv * hkv * d, d, hkv * d, 1});
    g.reshape("reshape K", kt, k);
    g.matmul("dS K", ds, k, dq_accum, len_q, nullptr, len_kv);
    g.pointwise("dQ from accumulator", CUDNN_POINTWISE_IDENTITY, f32, dq_accum, nullptr, nullptr, dq);
  }
};

CudnnSdpaBackward::CudnnSdpaBackward(const Problem& p) : m_graph(std::make_unique<Graph>(p)) {}
CudnnSdpaBackward::~CudnnSdpaBackward() = default;

std::size_t CudnnSdpaBackward::workspace_bytes() const { return m_graph->bytes; }

void CudnnSdpaBackward::run(const BackwardArgs& a) {
  Graph& gr = *m_graph;
  if (!a.q || !a.k || !a.v || !a.o || !a.d_o || !a.lse || !a.dq || !a.dk || !a.dv)
    throw KernelError("cudnn.sdpa backward: a tensor pointer is null");
  if (a.workspace_bytes < gr.bytes)
    throw KernelError("cudnn.sdpa backward: workspace of " + std::to_string(a.workspace_bytes) +
                      " bytes, needs " + std::to_string(gr.bytes));
  cudnn::check(cudnnSetStream(gr.handle->get(), static_cast<cudaStream_t>(a.stream)), "cudnnSetStream");
  char* ws = static_cast<char*>(a.workspace);
  float scale = a.scale;
  cudnn::VariantPack<22> add;
  add(kUidQ, a.q);
  add(kUidK, a.k);
  add(kUidV, a.v);
  add(kUidO, a.o);
  add(kUidDo, a.d_o);
  add(kUidStats, a.lse);
  add(kUidDq, a.dq);
  add(kUidDk, a.dk);
  add(kUidDv, a.dv);
  add(kUidDqAccum, ws);
  add(kUidRowSums, ws + gr.row_sums_offset);
  add(kUidScale, &scale);
  add(kUidOne, &gr.one_value);
  cudnn::add_mask_scalars(gr.mask, gr.scalars, add);
  if (gr.padding) {
    // Written on every run (the workspace is the caller's), as the frontend copies them per execute.
    auto* lens = reinterpret_cast<std::int32_t*>(ws + gr.seq_lens_offset);
    cudnn::launch_fill_int32(lens, static_cast<std::int32_t>(gr.p.seq_q), gr.p.batch, a.stream);
    cudnn::launch_fill_int32(lens + gr.p.batch, static_cast<std::int32_t>(gr.p.seq_kv), gr.p.batch, a.stream);
    add(kUidSeqLenQ, lens);
    add(kUidSeqLenKv, lens + gr.p.batch);
    add(kUidNegInfPadding, &gr.neg_inf);
  }
  gr.g.execute(gr.handle->get(), add.uids(), add.ptrs(), ws + gr.plan_offset);
}

}  // namespace attn
