// cpu.reference: two-pass softmax in fp64 over exactly the visible keys of each row.
#include "kernels/cpu/cpu_reference.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/selected_blocks.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace attn {

namespace {

// Index helpers for BSHD.
struct Strides {
  std::int64_t q_row, kv_row, v_row, o_row;
};

void reference_row(const Problem& p, const float* q, const float* k, const float* v, double scale,
                   const RowIndex& r, std::vector<double>& scores, double* o_row, double* lse_out,
                   SliceOrigin origin = {}) {
  const std::int64_t D = p.head_dim, Dv = p.head_dim_v;
  const std::int64_t group = p.heads_q / p.heads_kv;
  const std::int64_t hk = r.h / group;
  std::vector<std::int64_t> selected;  // the row's query block's key blocks (a selected branch)
  if (p.select.active())
    selected = selected_blocks(origin.full ? *origin.full : p, origin.batch + r.b, origin.kv_head + hk,
                               r.i / p.select.block);
  const float* qr = q + ((r.b * p.seq_q + r.i) * p.heads_q + r.h) * D;
  const auto keys = p.visible_keys(r.i);
  for (std::int64_t d = 0; d < Dv; ++d) o_row[d] = 0.0;
  if (keys.size() == 0) {
    if (lse_out) *lse_out = -std::numeric_limits<double>::infinity();
    return;
  }
  scores.resize(static_cast<std::size_t>(keys.size()));
  double mx = -std::numeric_limits<double>::infinity();
  for (std::int64_t j = keys.first; j < keys.last; ++j) {
    // A selected branch's unselected key inside the causal range: no dot product, weight 0.
    if (p.select.active() && !selected_visible(p, selected, r.i, j)) {
      scores[static_cast<std::size_t>(j - keys.first)] = -std::numeric_limits<double>::infinity();
      continue;
    }
    const float* kr = k + ((r.b * p.seq_kv + j) * p.heads_kv + hk) * D;
    double s = 0.0;
    for (std::int64_t d = 0; d < D; ++d) s += static_cast<double>(qr[d]) * static_cast<double>(kr[d]);
    s *= scale;
    scores[static_cast<std::size_t>(j - keys.first)] = s;
    mx = std::max(mx, s);
  }
  if (mx == -std::numeric_limits<double>::infinity()) {  // a selected branch's row with no block
    if (lse_out) *lse_out = mx;
    return;
  }
  double sum = 0.0;
  for (auto& s : scores) {
    s = std::exp(s - mx);
    sum += s;
  }
  for (std::int64_t j = keys.first; j < keys.last; ++j) {
    const double pj = scores[static_cast<std::size_t>(j - keys.first)] / sum;
    const float* vr = v + ((r.b * p.seq_kv + j) * p.heads_kv + hk) * Dv;
    for (std::int64_t d = 0; d < Dv; ++d) o_row[d] += pj * static_cast<double>(vr[d]);
  }
  if (lse_out) *lse_out = mx + std::log(sum);
}

}  // namespace

void cpu_reference_attention(const Problem& p, const float* q, const float* k, const float* v, double scale,
                             double* o, double* lse) {
  if (p.varlen.active()) {  // each sequence is a dense batch-1 problem at its offset
    for (std::int64_t b = 0; b < p.batch; ++b) {
      const std::int64_t qs = p.q_start(b), ks = p.kv_start(b);
      cpu_reference_attention(p.sequence(b), q + qs * p.heads_q * p.head_dim,
                              k + ks * p.heads_kv * p.head_dim, v + ks * p.heads_kv * p.head_dim_v, scale,
                              o + qs * p.heads_q * p.head_dim_v, lse ? lse + qs * p.heads_q : nullptr);
    }
    return;
  }
  parallel_for(p.batch * p.heads_q, [&](std::int64_t bh) {
    std::vector<double> scores;
    const std::int64_t b = bh / p.heads_q, h = bh % p.heads_q;
    for (std::int64_t i = 0; i < p.seq_q; ++i) {
      double* o_row = o + ((b * p.seq_q + i) * p.heads_q + h) * p.head_dim_v;
      double* lse_out = lse ? lse + (b * p.heads_q + h) * p.seq_q + i : nullptr;
      reference_row(p, q, k, v, scale, RowIndex{b, h, i}, scores, o_row, lse_out);
    }
  });
}

void cpu_reference_rows(const Problem& p, const float* q, const float* k, const float* v, double scale,
                        std::span<const RowIndex> rows, double* o_rows, double* lse_rows,
                        SliceOrigin origin) {
  parallel_for(static_cast<std::int64_t>(rows.size()), [&](std::int64_t n) {
    std::vector<double> scores;
    const RowIndex& r = rows[static_cast<std::size_t>(n)];
    double* o_row = o_rows + n * p.head_dim_v;
    double* lse_row = lse_rows ? lse_rows + n : nullptr;
    if (!p.varlen.active()) return reference_row(p, q, k, v, scale, r, scores, o_row, lse_row, origin);
    const std::int64_t qs = p.q_start(r.b), ks = p.kv_start(r.b);
    reference_row(p.sequence(r.b), q + qs * p.heads_q * p.head_dim, k + ks * p.heads_kv * p.head_dim,
                  v + ks * p.heads_kv * p.head_dim_v, scale, RowIndex{0, r.h, r.i}, scores, o_row, lse_row);
  });
}

namespace {

std::string cpu_why_not(const Problem& p, const Knobs&) {
  if (p.dtype != DType::fp32)
    return "dtype = " + std::string(to_string(p.dtype)) +
           ": CPU kernels read fp32 inputs; use --dtype fp32 (GPU results are checked against "
           "cpu.reference on rounded inputs internally)";
  return {};
}

class CpuReferenceKernel final : public PreparedKernel {
 public:
  explicit CpuReferenceKernel(const Problem& p) : m_problem(p) {}
  bool writes_lse() const override { return true; }
  void run(const AttentionArgs& a) override {
    const auto& p = m_problem;
    m_o.resize(static_cast<std::size_t>(p.o_elems()));
    m_lse.resize(static_cast<std::size_t>(p.lse_elems()));
    cpu_reference_attention(p, static_cast<const float*>(a.q), static_cast<const float*>(a.k),
                            static_cast<const float*>(a.v), a.scale, m_o.data(), m_lse.data());
    auto* o = static_cast<float*>(a.o);
    for (std::size_t n = 0; n < m_o.size(); ++n) o[n] = static_cast<float>(m_o[n]);
    if (a.lse)
      for (std::size_t n = 0; n < m_lse.size(); ++n) a.lse[n] = static_cast<float>(m_lse[n]);
  }
  // Exact gradients from Q, K, V and dO alone: the oracle does not trust a forward's O or LSE.
  void run_backward(const BackwardArgs& a) override {
    const auto& p = m_problem;
    std::vector<double> dq(static_cast<std::size_t>(p.q_elems())), dk(static_cast<std::size_t>(p.k_elems())),
        dv(static_cast<std::size_t>(p.v_elems()));
    cpu_reference_backward(p, static_cast<const float*>(a.q), static_cast<const float*>(a.k),
                           static_cast<const float*>(a.v), static_cast<const float*>(a.d_o), a.scale,
                           dq.data(), dk.data(), dv.data());
    auto narrow = [](const std::vector<double>& from, void* to) {
      auto* out = static_cast<float*>(to);
      for (std::size_t n = 0; n < from.size(); ++n) out[n] = static_cast<float>(from[n]);
    };
    narrow(dq, a.dq);
    narrow(dk, a.dk);
    narrow(dv, a.dv);
  }

 private:
  Problem m_problem;
  std::vector<double> m_o, m_lse;
};

}  // namespace

std::string cpu_kernel_why_not(const Problem& p, const Knobs& k) { return cpu_why_not(p, k); }

KernelSpec make_cpu_reference_spec() {
  KernelSpec s;
  s.id = "cpu.reference";
  s.description = "CPU oracle: exact two-pass softmax with fp64 accumulation, every mask; exact backward";
  s.backend = Backend::cpu;
  s.compressed_mask = true;
  s.selected_branch = true;
  s.varlen = true;
  s.why_not = cpu_why_not;
  s.backward_why_not = cpu_why_not;
  s.prepare = [](const Problem& p, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<CpuReferenceKernel>(p);
  };
  return s;
}

}  // namespace attn
