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
#include "kernels/cudnn/cudnn_graph.hpp"
#include "kernels/cudnn/cudnn_sdpa_rows.hpp"

namespace attn {
namespace {

using cudnn::Descriptor;

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
  kFirstVirtual = 100,
};

// How a Problem maps onto the graph cuDNN sees. With a right bound (causal, or window.right >= 0)
// and seq_q > seq_kv, the leading query rows i < seq_q - seq_kv - right see no key; cuDNN's
// bottom-right band refuses seq_q > seq_kv, so those rows are cut off (Q and O start `skipped` rows
// later, same strides) and written by us: O = 0, LSE = -inf. Cutting leading rows keeps every
// remaining row's diagonal, since diag(i) = i + seq_kv - seq_q is unchanged when both i and seq_q
// drop by `skipped`.
struct MaskPlan {
  std::int64_t skipped = 0;  // leading query rows with no visible key
  std::int64_t seq_q = 0;    // query rows cuDNN computes
  bool right = false;        // keep key j iff j <= i + (seq_kv - seq_q) + right_shift
  std::int64_t right_shift = 0;
  bool left = false;  // keep key j iff j >= i + (seq_kv - seq_q) - left_keys
  std::int64_t left_keys = 0;
};

MaskPlan plan_mask(const Problem& p) {
  MaskPlan m;
  std::int64_t right = -1;
  if (p.causal) right = 0;
  if (p.window.right >= 0) right = right < 0 ? p.window.right : std::min(right, p.window.right);
  m.right = right >= 0;
  m.right_shift = std::max<std::int64_t>(right, 0);
  m.left = p.window.left >= 0;
  m.left_keys = std::max<std::int64_t>(p.window.left, 0);
  if (m.right) m.skipped = std::clamp<std::int64_t>(p.seq_q - p.seq_kv - right, 0, p.seq_q);
  m.seq_q = p.seq_q - m.skipped;
  return m;
}

std::string version_text(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

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

std::vector<std::int64_t> packed_strides(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> s(dims.size(), 1);
  for (std::size_t d = dims.size() - 1; d > 0; --d) s[d - 1] = s[d] * dims[d];
  return s;
}

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

class CudnnSdpaKernel final : public PreparedKernel {
 public:
  explicit CudnnSdpaKernel(const Problem& p)
      : m_p(p), m_mask(plan_mask(p)), m_elem(static_cast<std::int64_t>(dtype_bytes(p.dtype))) {
    m_handle = cudnn::thread_handle();
    build_graph();
    build_plan();
    const std::size_t stats_bytes =
        static_cast<std::size_t>(p.batch * p.heads_q * m_mask.seq_q) * sizeof(float);
    m_stats_offset = align_up(static_cast<std::size_t>(m_plan_workspace), kWorkspaceAlign);
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
    const bool direct_lse = a.lse != nullptr && m_mask.skipped == 0;
    float* stats = direct_lse ? a.lse : reinterpret_cast<float*>(ws + m_stats_offset);
    const std::int64_t skipped = m_mask.skipped;
    const auto* q = static_cast<const char*>(a.q) + skipped * m_p.heads_q * m_p.head_dim * m_elem;
    auto* o = static_cast<char*>(a.o) + skipped * m_p.heads_q * m_p.head_dim_v * m_elem;
    float scale = a.scale;

    std::array<std::int64_t, 12> uids{};
    std::array<void*, 12> ptrs{};
    std::size_t n = 0;
    auto add = [&](std::int64_t uid, const void* ptr) {
      uids[n] = uid;
      // cuDNN's variant pack takes void*; inputs are only read.
      ptrs[n] = const_cast<void*>(ptr);
      ++n;
    };
    add(kUidQ, q);
    add(kUidK, a.k);
    add(kUidV, a.v);
    add(kUidO, o);
    add(kUidStats, stats);
    add(kUidScale, &scale);
    if (m_mask.right) {
      add(kUidSeqKv, &m_seq_kv_value);
      add(kUidSeqQ, &m_seq_q_value);
      if (m_mask.right_shift != 0) add(kUidRightShift, &m_right_shift_value);
      add(kUidNegInfRight, &m_neg_inf);
    }
    if (m_mask.left) {
      add(kUidLeftBound, &m_left_bound_value);
      add(kUidNegInfLeft, &m_neg_inf);
    }
    void* plan_ws = ws;
    Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(n), uids.data());
    pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<std::int64_t>(n),
             ptrs.data());
    pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &plan_ws);
    pack.finalize();
    cudnn::check(cudnnBackendExecute(m_handle->get(), m_plan->get(), pack.get()), "execute plan");

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
  enum class Kind { real, virt, by_value };

  const Descriptor& tensor(const std::string& name, cudnnDataType_t dt, const std::vector<std::int64_t>& dims,
                           const std::vector<std::int64_t>& strides, std::int64_t uid, Kind kind) {
    Descriptor& d = m_descs.emplace_back(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor " + name);
    d.set_dtype(CUDNN_ATTR_TENSOR_DATA_TYPE, dt)
        .set_i64s(CUDNN_ATTR_TENSOR_DIMENSIONS, dims)
        .set_i64s(CUDNN_ATTR_TENSOR_STRIDES, strides)
        .set_i64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid)
        .set_i64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);
    if (kind == Kind::virt) d.set_bool(CUDNN_ATTR_TENSOR_IS_VIRTUAL, true);
    if (kind == Kind::by_value) d.set_bool(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true);
    d.finalize();
    return d;
  }
  const Descriptor& virt(const std::string& name, cudnnDataType_t dt, const std::vector<std::int64_t>& dims) {
    return tensor(name, dt, dims, packed_strides(dims), m_next_uid++, Kind::virt);
  }
  // A [1,1,1,1] scalar passed by value: the variant pack carries a host pointer to it.
  const Descriptor& scalar(const std::string& name, cudnnDataType_t dt, std::int64_t uid) {
    return tensor(name, dt, {1, 1, 1, 1}, {1, 1, 1, 1}, uid, Kind::by_value);
  }

  void add_op(Descriptor& op) {
    op.finalize();
    m_ops.push_back(op.get());
  }

  void matmul(const std::string& name, const Descriptor& a, const Descriptor& b, const Descriptor& c) {
    Descriptor& mm = m_descs.emplace_back(CUDNN_BACKEND_MATMUL_DESCRIPTOR, name + " matmul");
    mm.set_dtype(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT);
    mm.finalize();
    Descriptor& op = m_descs.emplace_back(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "operation " + name);
    op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
    add_op(op);
  }

  // y = mode(x[, b][, t]); for BINARY_SELECT y = t ? x : b. axis >= 0 only for GEN_INDEX.
  void pointwise(const std::string& name, cudnnPointwiseMode_t mode, cudnnDataType_t prec,
                 const Descriptor& x, const Descriptor* b, const Descriptor* t, const Descriptor& y,
                 std::int64_t axis = -1) {
    Descriptor& pw = m_descs.emplace_back(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, name + " pointwise");
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
        .set_dtype(CUDNN_ATTR_POINTWISE_MATH_PREC, prec);
    if (axis >= 0) pw.set_i64(CUDNN_ATTR_POINTWISE_AXIS, axis);
    pw.finalize();
    Descriptor& op = m_descs.emplace_back(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "operation " + name);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    add_op(op);
  }

  void reduction(const std::string& name, cudnnReduceTensorOp_t mode, const Descriptor& x,
                 const Descriptor& y) {
    Descriptor& rd = m_descs.emplace_back(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, name + " reduction");
    rd.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode)
        .set_dtype(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT);
    rd.finalize();
    Descriptor& op = m_descs.emplace_back(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, "operation " + name);
    op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, rd);
    add_op(op);
  }

  // The diagonal-band masks in the shape cudnn-frontend's composite lowering uses (its note: the
  // fused engine is tuned for exactly these subtrees): right bound keeps row + skv - sq + shift >= col,
  // left bound keeps col + (left + 1 - skv + sq) > row.
  const Descriptor& mask_right(const Descriptor& scores, const std::vector<std::int64_t>& dims) {
    const Descriptor& row = virt("row index", CUDNN_DATA_INT32, dims);
    pointwise("gen row index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, scores, nullptr, nullptr, row, 2);
    const Descriptor& col = virt("col index", CUDNN_DATA_INT32, dims);
    pointwise("gen col index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, scores, nullptr, nullptr, col, 3);
    const Descriptor& skv = scalar("seq_kv", CUDNN_DATA_INT32, kUidSeqKv);
    const Descriptor& row_skv = virt("row + skv", CUDNN_DATA_INT32, dims);
    pointwise("row + skv", CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, row, &skv, nullptr, row_skv);
    const Descriptor& sq = scalar("seq_q", CUDNN_DATA_INT32, kUidSeqQ);
    const Descriptor& row_diag = virt("row + skv - sq", CUDNN_DATA_INT32, dims);
    pointwise("row + skv - sq", CUDNN_POINTWISE_SUB, CUDNN_DATA_INT32, row_skv, &sq, nullptr, row_diag);
    const Descriptor* bound = &row_diag;
    if (m_mask.right_shift != 0) {
      const Descriptor& shift = scalar("right shift", CUDNN_DATA_INT32, kUidRightShift);
      const Descriptor& shifted = virt("row + skv - sq + right", CUDNN_DATA_INT32, dims);
      pointwise("row + window", CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, row_diag, &shift, nullptr, shifted);
      bound = &shifted;
    }
    const Descriptor& keep = virt("right keep", CUDNN_DATA_BOOLEAN, dims);
    pointwise("bound >= col", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, *bound, &col, nullptr, keep);
    const Descriptor& neg_inf = scalar("-inf (right)", CUDNN_DATA_FLOAT, kUidNegInfRight);
    const Descriptor& out = virt("S right-masked", CUDNN_DATA_FLOAT, dims);
    pointwise("right select", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, scores, &neg_inf, &keep, out);
    return out;
  }

  const Descriptor& mask_left(const Descriptor& scores, const std::vector<std::int64_t>& dims) {
    const Descriptor& row = virt("row index (left)", CUDNN_DATA_INT32, dims);
    pointwise("gen row index (left)", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, scores, nullptr, nullptr,
              row, 2);
    const Descriptor& col = virt("col index (left)", CUDNN_DATA_INT32, dims);
    pointwise("gen col index (left)", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, scores, nullptr, nullptr,
              col, 3);
    const Descriptor& bound = scalar("left bound", CUDNN_DATA_FLOAT, kUidLeftBound);
    const Descriptor& col_shift = virt("col + window", CUDNN_DATA_FLOAT, dims);
    pointwise("col + window", CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, col, &bound, nullptr, col_shift);
    const Descriptor& keep = virt("left keep", CUDNN_DATA_BOOLEAN, dims);
    pointwise("col + window > row", CUDNN_POINTWISE_CMP_GT, CUDNN_DATA_BOOLEAN, col_shift, &row, nullptr,
              keep);
    const Descriptor& neg_inf = scalar("-inf (left)", CUDNN_DATA_FLOAT, kUidNegInfLeft);
    const Descriptor& out = virt("S left-masked", CUDNN_DATA_FLOAT, dims);
    pointwise("left select", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, scores, &neg_inf, &keep, out);
    return out;
  }

  void build_graph() {
    const std::int64_t b = m_p.batch, hq = m_p.heads_q, hkv = m_p.heads_kv;
    const std::int64_t sq_full = m_p.seq_q, skv = m_p.seq_kv, d = m_p.head_dim, dv = m_p.head_dim_v;
    const std::int64_t sq = m_mask.seq_q;
    const cudnnDataType_t io = m_p.dtype == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;

    // BSHD memory seen as [B, H, S, D]; batch strides use the full seq_q so a sliced Q/O still walks
    // the caller's rows. K enters the first matmul transposed: [B, Hkv, D, Sk].
    const Descriptor& q =
        tensor("Q", io, {b, hq, sq, d}, {sq_full * hq * d, d, hq * d, 1}, kUidQ, Kind::real);
    const Descriptor& kt =
        tensor("K^T", io, {b, hkv, d, skv}, {skv * hkv * d, d, 1, hkv * d}, kUidK, Kind::real);
    const Descriptor& v =
        tensor("V", io, {b, hkv, skv, dv}, {skv * hkv * dv, dv, hkv * dv, 1}, kUidV, Kind::real);
    const Descriptor& o =
        tensor("O", io, {b, hq, sq, dv}, {sq_full * hq * dv, dv, hq * dv, 1}, kUidO, Kind::real);
    // cuDNN before 9.26 only writes packed [B, H, Sq, 1] stats, which is our LSE layout when nothing is cut.
    const Descriptor& stats =
        tensor("Stats", CUDNN_DATA_FLOAT, {b, hq, sq, 1}, {hq * sq, sq, 1, 1}, kUidStats, Kind::real);

    const std::vector<std::int64_t> score_dims{b, hq, sq, skv};
    const std::vector<std::int64_t> row_dims{b, hq, sq, 1};
    const Descriptor& s = virt("S = Q K^T", CUDNN_DATA_FLOAT, score_dims);
    matmul("bmm1", q, kt, s);
    const Descriptor& scale = scalar("scale", CUDNN_DATA_FLOAT, kUidScale);
    const Descriptor& s_scaled = virt("S * scale", CUDNN_DATA_FLOAT, score_dims);
    pointwise("attn scale", CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, s, &scale, nullptr, s_scaled);

    const Descriptor* scores = &s_scaled;
    if (m_mask.right) {
      m_seq_kv_value = static_cast<std::int32_t>(skv);
      m_seq_q_value = static_cast<std::int32_t>(sq);
      m_right_shift_value = static_cast<std::int32_t>(m_mask.right_shift);
      scores = &mask_right(*scores, score_dims);
    }
    if (m_mask.left) {
      // Keep j >= i + (skv - sq) - left, written as j + (left + 1 - skv + sq) > i.
      m_left_bound_value = static_cast<float>(m_mask.left_keys + 1 - skv + sq);
      scores = &mask_left(*scores, score_dims);
    }

    // Softmax with stats = max + log(sum(exp(S - max))), the natural-log LSE.
    const Descriptor& mx = virt("row max", CUDNN_DATA_FLOAT, row_dims);
    reduction("max", CUDNN_REDUCE_TENSOR_MAX, *scores, mx);
    const Descriptor& centred = virt("S - max", CUDNN_DATA_FLOAT, score_dims);
    pointwise("sub max", CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, *scores, &mx, nullptr, centred);
    const Descriptor& e = virt("exp(S - max)", CUDNN_DATA_FLOAT, score_dims);
    pointwise("exp", CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, centred, nullptr, nullptr, e);
    const Descriptor& sum = virt("row sum", CUDNN_DATA_FLOAT, row_dims);
    reduction("sum", CUDNN_REDUCE_TENSOR_ADD, e, sum);
    const Descriptor& log_sum = virt("log row sum", CUDNN_DATA_FLOAT, row_dims);
    pointwise("log", CUDNN_POINTWISE_LOG, CUDNN_DATA_FLOAT, sum, nullptr, nullptr, log_sum);
    pointwise("stats", CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, mx, &log_sum, nullptr, stats);
    // P goes into the second matmul in the I/O type, as the fused engine expects.
    const Descriptor& prob = virt("P", io, score_dims);
    pointwise("normalise", CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, e, &sum, nullptr, prob);
    matmul("bmm2", prob, v, o);
  }

  void build_plan() {
    cudnnHandle_t handle = m_handle->get();
    Descriptor& graph = m_descs.emplace_back(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    graph.set_descs(CUDNN_ATTR_OPERATIONGRAPH_OPS, m_ops);
    graph.finalize();

    std::string last_refusal = "no engine config returned by the heuristics";
    std::size_t tried = 0;
    for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
      Descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "engine heuristics");
      heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
      heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
      const cudnnStatus_t hs = cudnnBackendFinalize(heur.get());
      if (hs != CUDNN_STATUS_SUCCESS) {
        if (!cudnn::is_not_supported(hs)) cudnn::fail(hs, "finalize engine heuristics");
        last_refusal = "heuristics: " + cudnn::status_text(hs);
        continue;
      }
      std::int64_t count = 0;
      cudnn::check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
                   "count engine configs");
      if (count <= 0) continue;
      std::vector<Descriptor> cfgs;
      std::vector<cudnnBackendDescriptor_t> raw;
      for (std::int64_t i = 0; i < count; ++i) {
        raw.push_back(cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config").get());
      }
      std::int64_t returned = 0;
      cudnn::check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, raw.data()),
                   "get engine configs");
      for (std::int64_t i = 0; i < returned; ++i) {
        ++tried;
        Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
        plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
        plan.set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfgs[static_cast<std::size_t>(i)]);
        const cudnnStatus_t ps = cudnnBackendFinalize(plan.get());
        if (ps != CUDNN_STATUS_SUCCESS) {
          last_refusal = "execution plan: " + cudnn::status_text(ps);
          continue;
        }
        std::int64_t ws = 0, got = 0;
        cudnn::check(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                              CUDNN_TYPE_INT64, 1, &got, &ws),
                     "query plan workspace size");
        m_plan_workspace = ws;
        m_plan.emplace(std::move(plan));
        // The plan was finalized from this config; it stays alive as long as the plan does.
        m_descs.push_back(std::move(cfgs[static_cast<std::size_t>(i)]));
        return;
      }
    }
    throw Unsupported("cudnn.sdpa: no cuDNN engine takes this graph (" + std::to_string(tried) +
                      " engine configs tried; cuDNN " + version_text(cudnnGetVersion()) +
                      "): " + last_refusal);
  }

  Problem m_p;
  MaskPlan m_mask;
  std::int64_t m_elem;
  std::shared_ptr<cudnn::Handle> m_handle;
  // Every tensor, op and graph descriptor the plan was built from; a deque keeps references stable.
  std::deque<Descriptor> m_descs;
  std::vector<cudnnBackendDescriptor_t> m_ops;
  std::optional<Descriptor> m_plan;
  std::int64_t m_next_uid = kFirstVirtual;
  std::int64_t m_plan_workspace = 0;
  std::size_t m_stats_offset = 0;
  std::size_t m_workspace_bytes = 0;
  // By-value scalars: the variant pack of every run points at these.
  float m_neg_inf = -std::numeric_limits<float>::infinity();
  std::int32_t m_seq_kv_value = 0;
  std::int32_t m_seq_q_value = 0;
  std::int32_t m_right_shift_value = 0;
  float m_left_bound_value = 0.0f;
};

// A prepared problem's graph and plan, shared: the check's error bar (profiling/cuda/problem_cache.cpp)
// prepares cudnn.sdpa for a problem (on a host thread, while the GPU computes the reference), and the
// cudnn.sdpa case of the same problem follows it; building and finalizing the graph costs about
// 0.06 s each time, so the last plans built on each device are kept and handed out again. A plan and
// its handle are used by one thread at a time (the error bar, then the case), never concurrently.
class SharedCudnnSdpa final : public PreparedKernel {
 public:
  explicit SharedCudnnSdpa(std::shared_ptr<CudnnSdpaKernel> k) : m_k(std::move(k)) {}
  std::size_t workspace_bytes() const override { return m_k->workspace_bytes(); }
  bool writes_lse() const override { return m_k->writes_lse(); }
  void run(const AttentionArgs& a) override { m_k->run(a); }

 private:
  std::shared_ptr<CudnnSdpaKernel> m_k;
};

std::shared_ptr<CudnnSdpaKernel> recent_plan(const Problem& p) {
  constexpr std::size_t kKept = 4;
  static std::mutex mutex;
  // Never destroyed: cuDNN handles must not be torn down after the CUDA runtime at exit.
  static auto& recent = *new std::deque<std::pair<std::string, std::shared_ptr<CudnnSdpaKernel>>>;
  int device = 0;
  if (const cudaError_t err = cudaGetDevice(&device); err != cudaSuccess)
    throw KernelError(std::string("cudnn.sdpa: cudaGetDevice failed: ") + cudaGetErrorName(err));
  const std::string key = std::to_string(device) + " " + p.full_label();
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
  s.description = "cuDNN 9 fused flash-attention forward via the backend graph API (bottom-right masks, LSE)";
  s.backend = Backend::cuda;
  s.why_not = cudnn_sdpa_why_not;
  s.prepare = [](const Problem& p, const Knobs& knobs) -> std::unique_ptr<PreparedKernel> {
    require_supported(cudnn_sdpa_why_not(p, knobs));
    return std::make_unique<SharedCudnnSdpa>(recent_plan(p));
  };
  return s;
}

}  // namespace attn
