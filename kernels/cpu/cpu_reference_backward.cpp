// The oracle's backward: dS = P * (dP - D) row by row in fp64, over exactly the visible keys.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_reference.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace attn {

void cpu_reference_backward(const Problem& p, const float* q, const float* k, const float* v,
                            const float* d_o, double scale, double* dq, double* dk, double* dv) {
  if (p.varlen.active()) {  // each sequence is a dense batch-1 problem at its offset
    for (std::int64_t b = 0; b < p.batch; ++b) {
      const std::int64_t qs = p.q_start(b), ks = p.kv_start(b);
      const std::int64_t q_row = p.heads_q * p.head_dim, o_row = p.heads_q * p.head_dim_v;
      const std::int64_t k_row = p.heads_kv * p.head_dim, v_row = p.heads_kv * p.head_dim_v;
      cpu_reference_backward(p.sequence(b), q + qs * q_row, k + ks * k_row, v + ks * v_row, d_o + qs * o_row,
                             scale, dq + qs * q_row, dk + ks * k_row, dv + ks * v_row);
    }
    return;
  }
  const std::int64_t D = p.head_dim, Dv = p.head_dim_v;
  const std::int64_t group = p.heads_q / p.heads_kv;
  // One task per (batch, KV head): it owns that head's dK and dV and the dQ rows of its query
  // heads, so no two tasks write the same element.
  parallel_for(p.batch * p.heads_kv, [&](std::int64_t task) {
    const std::int64_t b = task / p.heads_kv, hk = task % p.heads_kv;
    std::vector<double> dk_acc(static_cast<std::size_t>(p.seq_kv * D), 0.0);
    std::vector<double> dv_acc(static_cast<std::size_t>(p.seq_kv * Dv), 0.0);
    std::vector<double> prob, dprob, dq_row(static_cast<std::size_t>(D));
    auto k_row = [&](std::int64_t j) { return k + ((b * p.seq_kv + j) * p.heads_kv + hk) * D; };
    auto v_row = [&](std::int64_t j) { return v + ((b * p.seq_kv + j) * p.heads_kv + hk) * Dv; };
    for (std::int64_t h = hk * group; h < (hk + 1) * group; ++h) {
      for (std::int64_t i = 0; i < p.seq_q; ++i) {
        const float* qr = q + ((b * p.seq_q + i) * p.heads_q + h) * D;
        const float* dor = d_o + ((b * p.seq_q + i) * p.heads_q + h) * Dv;
        double* dqr = dq + ((b * p.seq_q + i) * p.heads_q + h) * D;
        const auto keys = p.visible_keys(i);
        std::fill(dq_row.begin(), dq_row.end(), 0.0);
        if (keys.size() > 0) {
          const auto n = static_cast<std::size_t>(keys.size());
          prob.resize(n);
          dprob.resize(n);
          double mx = -std::numeric_limits<double>::infinity();
          for (std::int64_t j = keys.first; j < keys.last; ++j) {
            const float* kr = k_row(j);
            double s = 0.0;
            for (std::int64_t d = 0; d < D; ++d) s += static_cast<double>(qr[d]) * kr[d];
            prob[static_cast<std::size_t>(j - keys.first)] = s * scale;
            mx = std::max(mx, s * scale);
          }
          double sum = 0.0;
          for (double& x : prob) sum += (x = std::exp(x - mx));
          double row_dot = 0.0;  // D_i = sum_j P_ij dP_ij (= dO_i . O_i)
          for (std::int64_t j = keys.first; j < keys.last; ++j) {
            const auto idx = static_cast<std::size_t>(j - keys.first);
            prob[idx] /= sum;
            const float* vr = v_row(j);
            double dp = 0.0;
            for (std::int64_t d = 0; d < Dv; ++d) dp += static_cast<double>(dor[d]) * vr[d];
            dprob[idx] = dp;
            row_dot += prob[idx] * dp;
          }
          for (std::int64_t j = keys.first; j < keys.last; ++j) {
            const auto idx = static_cast<std::size_t>(j - keys.first);
            const double pj = prob[idx];
            const double ds = pj * (dprob[idx] - row_dot) * scale;
            const float* kr = k_row(j);
            double* dkr = dk_acc.data() + j * D;
            double* dvr = dv_acc.data() + j * Dv;
            for (std::int64_t d = 0; d < D; ++d) {
              dq_row[static_cast<std::size_t>(d)] += ds * kr[d];
              dkr[d] += ds * qr[d];
            }
            for (std::int64_t d = 0; d < Dv; ++d) dvr[d] += pj * dor[d];
          }
        }
        for (std::int64_t d = 0; d < D; ++d) dqr[d] = dq_row[static_cast<std::size_t>(d)];
      }
    }
    for (std::int64_t j = 0; j < p.seq_kv; ++j) {
      double* dkr = dk + ((b * p.seq_kv + j) * p.heads_kv + hk) * D;
      double* dvr = dv + ((b * p.seq_kv + j) * p.heads_kv + hk) * Dv;
      for (std::int64_t d = 0; d < D; ++d) dkr[d] = dk_acc[static_cast<std::size_t>(j * D + d)];
      for (std::int64_t d = 0; d < Dv; ++d) dvr[d] = dv_acc[static_cast<std::size_t>(j * Dv + d)];
    }
  });
}

}  // namespace attn
