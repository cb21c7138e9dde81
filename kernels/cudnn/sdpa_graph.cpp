// The shared graph builder of the cuDNN SDPA kernels (see sdpa_graph.hpp).
#include "kernels/cudnn/sdpa_graph.hpp"

#include <algorithm>
#include <limits>

#include "kernels/api/kernel_spec.hpp"

namespace attn::cudnn {

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
  m.top_left_causal = m.right && m.right_shift == 0 && !m.left && p.seq_q == p.seq_kv;
  return m;
}

std::string version_text(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

std::vector<std::int64_t> packed_strides(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> s(dims.size(), 1);
  for (std::size_t d = dims.size() - 1; d > 0; --d) s[d - 1] = s[d] * dims[d];
  return s;
}

const Descriptor& GraphBuilder::tensor(const std::string& name, cudnnDataType_t dt,
                                       const std::vector<std::int64_t>& dims,
                                       const std::vector<std::int64_t>& strides, std::int64_t uid, Kind kind,
                                       const Descriptor* ragged) {
  Descriptor& d = m_descs.emplace_back(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor " + name);
  d.set_dtype(CUDNN_ATTR_TENSOR_DATA_TYPE, dt)
      .set_i64s(CUDNN_ATTR_TENSOR_DIMENSIONS, dims)
      .set_i64s(CUDNN_ATTR_TENSOR_STRIDES, strides)
      .set_i64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid)
      .set_i64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);
  if (kind == Kind::virt) d.set_bool(CUDNN_ATTR_TENSOR_IS_VIRTUAL, true);
  if (kind == Kind::by_value) d.set_bool(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true);
  if (ragged) d.set_desc(CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, *ragged);
  d.finalize();
  return d;
}

const Descriptor& GraphBuilder::virt(const std::string& name, cudnnDataType_t dt,
                                     const std::vector<std::int64_t>& dims) {
  return tensor(name, dt, dims, packed_strides(dims), m_next_uid++, Kind::virt);
}

const Descriptor& GraphBuilder::virt_strided(const std::string& name, cudnnDataType_t dt,
                                             const std::vector<std::int64_t>& dims,
                                             const std::vector<std::int64_t>& strides) {
  return tensor(name, dt, dims, strides, m_next_uid++, Kind::virt);
}

const Descriptor& GraphBuilder::scalar(const std::string& name, cudnnDataType_t dt, std::int64_t uid) {
  return tensor(name, dt, {1, 1, 1, 1}, {1, 1, 1, 1}, uid, Kind::by_value);
}

void GraphBuilder::add_op(Descriptor& op) {
  op.finalize();
  m_ops.push_back(op.get());
}

void GraphBuilder::matmul(const std::string& name, const Descriptor& a, const Descriptor& b,
                          const Descriptor& c, const Descriptor* m, const Descriptor* n,
                          const Descriptor* k) {
  Descriptor& mm = m_descs.emplace_back(CUDNN_BACKEND_MATMUL_DESCRIPTOR, name + " matmul");
  mm.set_dtype(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT);
  mm.finalize();
  Descriptor& op = m_descs.emplace_back(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "operation " + name);
  op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
      .set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
      .set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
      .set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
  if (m) op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, *m);
  if (n) op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, *n);
  if (k) op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, *k);
  add_op(op);
}

const Descriptor& GraphBuilder::padding_mask(const Descriptor& scores, const std::vector<std::int64_t>& dims,
                                             const Descriptor& seq_len_q, const Descriptor& seq_len_kv,
                                             std::int64_t neg_inf_uid) {
  const Descriptor& row = virt("row index (padding)", CUDNN_DATA_INT32, dims);
  pointwise("gen row index (padding)", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, scores, nullptr, nullptr,
            row, 2);
  const Descriptor& col = virt("col index (padding)", CUDNN_DATA_INT32, dims);
  pointwise("gen col index (padding)", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, scores, nullptr, nullptr,
            col, 3);
  const Descriptor& row_in = virt("row < seq_len_q", CUDNN_DATA_BOOLEAN, dims);
  pointwise("row < seq_len_q", CUDNN_POINTWISE_CMP_LT, CUDNN_DATA_BOOLEAN, row, &seq_len_q, nullptr, row_in);
  const Descriptor& col_in = virt("col < seq_len_kv", CUDNN_DATA_BOOLEAN, dims);
  pointwise("col < seq_len_kv", CUDNN_POINTWISE_CMP_LT, CUDNN_DATA_BOOLEAN, col, &seq_len_kv, nullptr,
            col_in);
  const Descriptor& keep = virt("padding keep", CUDNN_DATA_BOOLEAN, dims);
  pointwise("row and col in", CUDNN_POINTWISE_LOGICAL_AND, CUDNN_DATA_BOOLEAN, row_in, &col_in, nullptr,
            keep);
  const Descriptor& neg_inf = scalar("-inf (padding)", CUDNN_DATA_FLOAT, neg_inf_uid);
  const Descriptor& out = virt("S padding-masked", CUDNN_DATA_FLOAT, dims);
  pointwise("padding select", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, scores, &neg_inf, &keep, out);
  return out;
}

void GraphBuilder::pointwise(const std::string& name, cudnnPointwiseMode_t mode, cudnnDataType_t prec,
                             const Descriptor& x, const Descriptor* b, const Descriptor* t,
                             const Descriptor& y, std::int64_t axis) {
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

void GraphBuilder::reduction(const std::string& name, cudnnReduceTensorOp_t mode, const Descriptor& x,
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

void GraphBuilder::reshape(const std::string& name, const Descriptor& x, const Descriptor& y) {
  Descriptor& op = m_descs.emplace_back(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, "operation " + name);
  op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x).set_desc(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y);
  add_op(op);
}

// Right bound: keeps row + skv - sq + shift >= col. A plain causal mask of a square problem is the
// top-left one, row >= col: cuDNN's fused backward recognises that subtree and skips the masked
// tiles (with the bottom-right form it computed every tile: 1.4-2.2x slower causal backward on the
// H100, docs/PERF.md).
const Descriptor& GraphBuilder::mask_right(const Descriptor& scores, const std::vector<std::int64_t>& dims,
                                           const MaskPlan& m, const MaskScalars& s) {
  const Descriptor& row = virt("row index", CUDNN_DATA_INT32, dims);
  pointwise("gen row index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, scores, nullptr, nullptr, row, 2);
  const Descriptor& col = virt("col index", CUDNN_DATA_INT32, dims);
  pointwise("gen col index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, scores, nullptr, nullptr, col, 3);
  if (m.top_left_causal) {
    const Descriptor& keep = virt("causal keep", CUDNN_DATA_BOOLEAN, dims);
    pointwise("row >= col", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, &col, nullptr, keep);
    const Descriptor& neg_inf = scalar("-inf (causal)", CUDNN_DATA_FLOAT, s.neg_inf_right_uid);
    const Descriptor& out = virt("S causal-masked", CUDNN_DATA_FLOAT, dims);
    pointwise("causal select", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, scores, &neg_inf, &keep, out);
    return out;
  }
  const Descriptor& skv = scalar("seq_kv", CUDNN_DATA_INT32, s.seq_kv_uid);
  const Descriptor& row_skv = virt("row + skv", CUDNN_DATA_INT32, dims);
  pointwise("row + skv", CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, row, &skv, nullptr, row_skv);
  const Descriptor& sq = scalar("seq_q", CUDNN_DATA_INT32, s.seq_q_uid);
  const Descriptor& row_diag = virt("row + skv - sq", CUDNN_DATA_INT32, dims);
  pointwise("row + skv - sq", CUDNN_POINTWISE_SUB, CUDNN_DATA_INT32, row_skv, &sq, nullptr, row_diag);
  const Descriptor* bound = &row_diag;
  if (m.right_shift != 0) {
    const Descriptor& shift = scalar("right shift", CUDNN_DATA_INT32, s.right_shift_uid);
    const Descriptor& shifted = virt("row + skv - sq + right", CUDNN_DATA_INT32, dims);
    pointwise("row + window", CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, row_diag, &shift, nullptr, shifted);
    bound = &shifted;
  }
  const Descriptor& keep = virt("right keep", CUDNN_DATA_BOOLEAN, dims);
  pointwise("bound >= col", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, *bound, &col, nullptr, keep);
  const Descriptor& neg_inf = scalar("-inf (right)", CUDNN_DATA_FLOAT, s.neg_inf_right_uid);
  const Descriptor& out = virt("S right-masked", CUDNN_DATA_FLOAT, dims);
  pointwise("right select", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, scores, &neg_inf, &keep, out);
  return out;
}

// Left bound: keeps col + (left + 1 - skv + sq) > row.
const Descriptor& GraphBuilder::mask_left(const Descriptor& scores, const std::vector<std::int64_t>& dims,
                                          const MaskScalars& s) {
  const Descriptor& row = virt("row index (left)", CUDNN_DATA_INT32, dims);
  pointwise("gen row index (left)", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, scores, nullptr, nullptr,
            row, 2);
  const Descriptor& col = virt("col index (left)", CUDNN_DATA_INT32, dims);
  pointwise("gen col index (left)", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, scores, nullptr, nullptr,
            col, 3);
  const Descriptor& bound = scalar("left bound", CUDNN_DATA_FLOAT, s.left_bound_uid);
  const Descriptor& col_shift = virt("col + window", CUDNN_DATA_FLOAT, dims);
  pointwise("col + window", CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, col, &bound, nullptr, col_shift);
  const Descriptor& keep = virt("left keep", CUDNN_DATA_BOOLEAN, dims);
  pointwise("col + window > row", CUDNN_POINTWISE_CMP_GT, CUDNN_DATA_BOOLEAN, col_shift, &row, nullptr, keep);
  const Descriptor& neg_inf = scalar("-inf (left)", CUDNN_DATA_FLOAT, s.neg_inf_left_uid);
  const Descriptor& out = virt("S left-masked", CUDNN_DATA_FLOAT, dims);
  pointwise("left select", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, scores, &neg_inf, &keep, out);
  return out;
}

const Descriptor& GraphBuilder::band_mask(const Descriptor& scores, const std::vector<std::int64_t>& dims,
                                          const MaskPlan& m, std::int64_t seq_q, std::int64_t seq_kv,
                                          MaskScalars& s) {
  s.neg_inf = -std::numeric_limits<float>::infinity();
  const Descriptor* out = &scores;
  if (m.right) {
    s.seq_kv = static_cast<std::int32_t>(seq_kv);
    s.seq_q = static_cast<std::int32_t>(seq_q);
    s.right_shift = static_cast<std::int32_t>(m.right_shift);
    out = &mask_right(*out, dims, m, s);
  }
  if (m.left) {
    // Keep j >= i + (skv - sq) - left, written as j + (left + 1 - skv + sq) > i.
    s.left_bound = static_cast<float>(m.left_keys + 1 - seq_kv + seq_q);
    out = &mask_left(*out, dims, s);
  }
  return *out;
}

void GraphBuilder::build_plan(cudnnHandle_t handle, const char* kernel_id) {
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
      if (!is_not_supported(hs)) fail(hs, "finalize engine heuristics");
      last_refusal = "heuristics: " + status_text(hs);
      continue;
    }
    std::int64_t count = 0;
    check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                   0, &count, nullptr),
          "count engine configs");
    if (count <= 0) continue;
    std::vector<Descriptor> cfgs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (std::int64_t i = 0; i < count; ++i)
      raw.push_back(cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config").get());
    std::int64_t returned = 0;
    check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                   count, &returned, raw.data()),
          "get engine configs");
    for (std::int64_t i = 0; i < returned; ++i) {
      ++tried;
      Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      plan.set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfgs[static_cast<std::size_t>(i)]);
      const cudnnStatus_t ps = cudnnBackendFinalize(plan.get());
      if (ps != CUDNN_STATUS_SUCCESS) {
        last_refusal = "execution plan: " + status_text(ps);
        continue;
      }
      std::int64_t ws = 0, got = 0;
      check(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                     1, &got, &ws),
            "query plan workspace size");
      m_plan_workspace = ws;
      m_plan.emplace(std::move(plan));
      // The plan was finalized from this config; it stays alive as long as the plan does.
      m_descs.push_back(std::move(cfgs[static_cast<std::size_t>(i)]));
      return;
    }
  }
  throw Unsupported(std::string(kernel_id) + ": no cuDNN engine takes this graph (" + std::to_string(tried) +
                    " engine configs tried; cuDNN " + version_text(cudnnGetVersion()) + "): " + last_refusal);
}

void GraphBuilder::execute(cudnnHandle_t handle, std::span<const std::int64_t> uids,
                           std::span<void* const> ptrs, void* workspace) const {
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(uids.size()),
           uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<std::int64_t>(ptrs.size()),
           ptrs.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize();
  check(cudnnBackendExecute(handle, m_plan->get(), pack.get()), "execute plan");
}

}  // namespace attn::cudnn
