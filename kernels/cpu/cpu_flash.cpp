// cpu.flash: FlashAttention's tiled online softmax on the CPU in fp32, threaded over B x Hq.
// It proves the tiling algorithm (Br x Bc tiles, running max/sum, one rescale per tile) against
// cpu.reference and gives the CPU backend a second kernel to compare.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/sequence_views.hpp"
#include "kernels/cpu/cpu_flash_backward.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace attn {

std::string cpu_kernel_why_not(const Problem& p, const Knobs& k);

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Tiles {
  std::int64_t br, bc;
};

void flash_head(const Problem& p, const AttentionArgs& a, Tiles t, std::int64_t b, std::int64_t h) {
  const auto* q = static_cast<const float*>(a.q);
  const auto* k = static_cast<const float*>(a.k);
  const auto* v = static_cast<const float*>(a.v);
  auto* o = static_cast<float*>(a.o);
  const std::int64_t D = p.head_dim, Dv = p.head_dim_v;
  const std::int64_t hk = h / (p.heads_q / p.heads_kv);
  const float scale = a.scale;

  std::vector<float> m(static_cast<std::size_t>(t.br)), l(static_cast<std::size_t>(t.br));
  std::vector<float> acc(static_cast<std::size_t>(t.br * Dv));
  std::vector<float> s(static_cast<std::size_t>(t.br * t.bc));

  for (std::int64_t i0 = 0; i0 < p.seq_q; i0 += t.br) {
    const std::int64_t rows = std::min(t.br, p.seq_q - i0);
    std::fill(m.begin(), m.end(), kNegInf);
    std::fill(l.begin(), l.end(), 0.0f);
    std::fill(acc.begin(), acc.end(), 0.0f);
    // Key tiles outside every row's band are skipped whole, as a GPU kernel does.
    std::int64_t first = p.seq_kv, last = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto kr = p.visible_keys(i0 + r);
      if (kr.size() == 0) continue;
      first = std::min(first, kr.first);
      last = std::max(last, kr.last);
    }
    for (std::int64_t j0 = (first / t.bc) * t.bc; j0 < last; j0 += t.bc) {
      const std::int64_t cols = std::min(t.bc, p.seq_kv - j0);
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t i = i0 + r;
        const auto kr = p.visible_keys(i);
        const float* qr = q + ((b * p.seq_q + i) * p.heads_q + h) * D;
        float tile_max = kNegInf;
        for (std::int64_t c = 0; c < cols; ++c) {
          const std::int64_t j = j0 + c;
          float sc = kNegInf;
          if (j >= kr.first && j < kr.last) {
            const float* krow = k + ((b * p.seq_kv + j) * p.heads_kv + hk) * D;
            float dot = 0.0f;
            for (std::int64_t d = 0; d < D; ++d) dot += qr[d] * krow[d];
            sc = dot * scale;
          }
          s[static_cast<std::size_t>(r * t.bc + c)] = sc;
          tile_max = std::max(tile_max, sc);
        }
        const float m_new = std::max(m[static_cast<std::size_t>(r)], tile_max);
        if (m_new == kNegInf) continue;  // nothing visible yet in this row
        const float correction = std::exp(m[static_cast<std::size_t>(r)] - m_new);
        float* acc_r = acc.data() + r * Dv;
        for (std::int64_t d = 0; d < Dv; ++d) acc_r[d] *= correction;
        float row_sum = 0.0f;
        for (std::int64_t c = 0; c < cols; ++c) {
          const float sc = s[static_cast<std::size_t>(r * t.bc + c)];
          if (sc == kNegInf) continue;
          const float pj = std::exp(sc - m_new);
          row_sum += pj;
          const float* vrow = v + ((b * p.seq_kv + j0 + c) * p.heads_kv + hk) * Dv;
          for (std::int64_t d = 0; d < Dv; ++d) acc_r[d] += pj * vrow[d];
        }
        l[static_cast<std::size_t>(r)] = l[static_cast<std::size_t>(r)] * correction + row_sum;
        m[static_cast<std::size_t>(r)] = m_new;
      }
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t i = i0 + r;
      const float lr = l[static_cast<std::size_t>(r)];
      float* orow = o + ((b * p.seq_q + i) * p.heads_q + h) * Dv;
      const float inv = lr > 0.0f ? 1.0f / lr : 0.0f;  // no visible key: zeros, never NaN
      for (std::int64_t d = 0; d < Dv; ++d) orow[d] = acc[static_cast<std::size_t>(r * Dv + d)] * inv;
      if (a.lse)
        a.lse[(b * p.heads_q + h) * p.seq_q + i] =
            lr > 0.0f ? m[static_cast<std::size_t>(r)] + std::log(lr) : kNegInf;
    }
  }
}

class CpuFlashKernel final : public PreparedKernel {
 public:
  CpuFlashKernel(const Problem& p, Tiles t) : m_problem(p), m_tiles(t) {}
  bool writes_lse() const override { return true; }
  void run(const AttentionArgs& a) override {
    const auto& p = m_problem;
    if (p.varlen.active()) {  // each sequence is a dense batch-1 problem at its offset
      for (std::int64_t b = 0; b < p.batch; ++b) {
        const Problem s = p.sequence(b);
        const AttentionArgs sa = sequence_args(p, a, b);
        parallel_for(s.heads_q, [&](std::int64_t h) { flash_head(s, sa, m_tiles, 0, h); });
      }
      return;
    }
    parallel_for(p.batch * p.heads_q,
                 [&](std::int64_t bh) { flash_head(p, a, m_tiles, bh / p.heads_q, bh % p.heads_q); });
  }
  void run_backward(const BackwardArgs& a) override {
    const auto& p = m_problem;
    if (p.varlen.active()) {
      for (std::int64_t b = 0; b < p.batch; ++b) {
        const Problem s = p.sequence(b);
        const BackwardArgs sa = sequence_args(p, a, b);
        parallel_for(s.heads_kv,
                     [&](std::int64_t hk) { flash_backward_kv_head(s, sa, m_tiles.br, m_tiles.bc, 0, hk); });
      }
      return;
    }
    parallel_for(p.batch * p.heads_kv, [&](std::int64_t bh) {
      flash_backward_kv_head(p, a, m_tiles.br, m_tiles.bc, bh / p.heads_kv, bh % p.heads_kv);
    });
  }

 private:
  Problem m_problem;
  Tiles m_tiles;
};

int knob_or(const Knobs& k, const char* name, int fallback) {
  const auto it = k.find(name);
  return it == k.end() || it->second == 0 ? fallback : it->second;
}

}  // namespace

KernelSpec make_cpu_flash_spec() {
  KernelSpec s;
  s.id = "cpu.flash";
  s.description =
      "CPU tiled online softmax (FlashAttention algorithm) in fp32, threaded over B x H; FA2 backward";
  s.backend = Backend::cpu;
  s.knobs = {{"block_q", {16, 32, 64, 128}, 64, "query rows per tile (Br)"},
             {"block_k", {16, 32, 64, 128}, 64, "keys per tile (Bc)"}};
  s.compressed_mask = true;
  s.varlen = true;
  s.why_not = [](const Problem& p, const Knobs& k) -> std::string {
    if (auto r = cpu_kernel_why_not(p, k); !r.empty()) return r;
    for (const char* name : {"block_q", "block_k"}) {
      const int v = knob_or(k, name, 64);
      if (v < 1 || v > 1024)
        return std::string("knob ") + name + " = " + std::to_string(v) + ": allowed 1..1024";
    }
    return {};
  };
  s.backward_why_not = [](const Problem&, const Knobs&) { return std::string(); };  // why_not covers it
  s.prepare = [](const Problem& p, const Knobs& k) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<CpuFlashKernel>(p, Tiles{knob_or(k, "block_q", 64), knob_or(k, "block_k", 64)});
  };
  return s;
}

}  // namespace attn
