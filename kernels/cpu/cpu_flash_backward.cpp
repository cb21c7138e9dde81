// FlashAttention-2's backward (Dao 2023, algorithm 2) on the CPU: D_i = dO_i . O_i once per row,
// then for each key block, every query block that sees it: P = exp(S - LSE), dV += P^T dO,
// dP = dO V^T, dS = P * (dP - D), dK += dS^T Q, dQ += dS K. One task owns a KV head, so dK and dV
// stay in its tile and dQ needs no atomics.
#include "kernels/cpu/cpu_flash_backward.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace attn {

void flash_backward_kv_head(const Problem& p, const BackwardArgs& a, std::int64_t br, std::int64_t bc,
                            std::int64_t b, std::int64_t hk) {
  const auto* q = static_cast<const float*>(a.q);
  const auto* k = static_cast<const float*>(a.k);
  const auto* v = static_cast<const float*>(a.v);
  const auto* o = static_cast<const float*>(a.o);
  const auto* d_o = static_cast<const float*>(a.d_o);
  const std::int64_t D = p.head_dim, Dv = p.head_dim_v, group = p.heads_q / p.heads_kv;
  const float scale = a.scale;
  auto q_at = [&](std::int64_t h, std::int64_t i) { return q + ((b * p.seq_q + i) * p.heads_q + h) * D; };
  auto o_at = [&](const float* t, std::int64_t h, std::int64_t i) {
    return t + ((b * p.seq_q + i) * p.heads_q + h) * Dv;
  };
  auto k_at = [&](std::int64_t j) { return k + ((b * p.seq_kv + j) * p.heads_kv + hk) * D; };
  auto v_at = [&](std::int64_t j) { return v + ((b * p.seq_kv + j) * p.heads_kv + hk) * Dv; };

  // D_i and dQ for every query row of the group's heads, [group, Sq] and [group, Sq, D].
  std::vector<float> row_dot(static_cast<std::size_t>(group * p.seq_q));
  std::vector<float> dq(static_cast<std::size_t>(group * p.seq_q * D), 0.0f);
  for (std::int64_t g = 0; g < group; ++g)
    for (std::int64_t i = 0; i < p.seq_q; ++i) {
      const float* dor = o_at(d_o, hk * group + g, i);
      const float* orow = o_at(o, hk * group + g, i);
      float s = 0.0f;
      for (std::int64_t d = 0; d < Dv; ++d) s += dor[d] * orow[d];
      row_dot[static_cast<std::size_t>(g * p.seq_q + i)] = s;
    }

  std::vector<float> dk_tile(static_cast<std::size_t>(bc * D)), dv_tile(static_cast<std::size_t>(bc * Dv));
  for (std::int64_t j0 = 0; j0 < p.seq_kv; j0 += bc) {
    const std::int64_t cols = std::min(bc, p.seq_kv - j0);
    std::fill(dk_tile.begin(), dk_tile.end(), 0.0f);
    std::fill(dv_tile.begin(), dv_tile.end(), 0.0f);
    for (std::int64_t g = 0; g < group; ++g) {
      const std::int64_t h = hk * group + g;
      for (std::int64_t i0 = 0; i0 < p.seq_q; i0 += br) {
        const std::int64_t rows = std::min(br, p.seq_q - i0);
        for (std::int64_t r = 0; r < rows; ++r) {
          const std::int64_t i = i0 + r;
          const auto keys = p.visible_keys(i);
          const std::int64_t c_first = std::max(keys.first, j0), c_last = std::min(keys.last, j0 + cols);
          if (c_first >= c_last) continue;  // masked out of this tile (also rows with no visible key)
          const float lse = a.lse[(b * p.heads_q + h) * p.seq_q + i];
          const float di = row_dot[static_cast<std::size_t>(g * p.seq_q + i)];
          const float* qr = q_at(h, i);
          const float* dor = o_at(d_o, h, i);
          float* dqr = dq.data() + (g * p.seq_q + i) * D;
          for (std::int64_t j = c_first; j < c_last; ++j) {
            const float* kr = k_at(j);
            const float* vr = v_at(j);
            float s = 0.0f, dp = 0.0f;
            for (std::int64_t d = 0; d < D; ++d) s += qr[d] * kr[d];
            for (std::int64_t d = 0; d < Dv; ++d) dp += dor[d] * vr[d];
            const float pj = std::exp(s * scale - lse);
            const float ds = pj * (dp - di) * scale;
            float* dkr = dk_tile.data() + (j - j0) * D;
            float* dvr = dv_tile.data() + (j - j0) * Dv;
            for (std::int64_t d = 0; d < Dv; ++d) dvr[d] += pj * dor[d];
            for (std::int64_t d = 0; d < D; ++d) {
              dkr[d] += ds * qr[d];
              dqr[d] += ds * kr[d];
            }
          }
        }
      }
    }
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::int64_t j = j0 + c;
      std::copy_n(dk_tile.data() + c * D, D,
                  static_cast<float*>(a.dk) + ((b * p.seq_kv + j) * p.heads_kv + hk) * D);
      std::copy_n(dv_tile.data() + c * Dv, Dv,
                  static_cast<float*>(a.dv) + ((b * p.seq_kv + j) * p.heads_kv + hk) * Dv);
    }
  }
  for (std::int64_t g = 0; g < group; ++g)
    for (std::int64_t i = 0; i < p.seq_q; ++i)
      std::copy_n(dq.data() + (g * p.seq_q + i) * D, D,
                  static_cast<float*>(a.dq) + ((b * p.seq_q + i) * p.heads_q + hk * group + g) * D);
}

}  // namespace attn
