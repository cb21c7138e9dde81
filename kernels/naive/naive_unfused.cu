// naive.unfused: "standard attention" in three plain kernels with an O(S^2) fp32 workspace:
// (a) S = scale * Q K^T [B, Hq, Sq, Sk], (b) masked softmax per row in place (writes LSE),
// (c) O = P V. fp32 accumulation throughout; both GEMMs are 64x64 shared-memory tiles, 4x4 per thread.
// Every score is computed, masked ones too: this is the baseline a fused kernel is measured against.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/launch_checks.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/common/device_int32_array.hpp"
#include "kernels/naive/row_softmax.cuh"
#include "kernels/reference/device_mask.hpp"
#include "kernels/reference/device_types.cuh"

namespace attn {

namespace {

constexpr int kTile = 64;      // output tile edge [elements]
constexpr int kStep = 16;      // reduction slice per shared-memory stage [elements]
constexpr int kThreads = 256;  // 16 x 16 threads, each a 4x4 micro-tile strided by 16
constexpr std::int64_t kMaxGridYZ = 65535;

struct NaiveParams {
  unsigned heads_q, heads_kv, group;  // unsigned: 32-bit unsigned division is inline, signed or 64-bit is a
                                      // called subroutine (spills)
  std::int64_t seq_q, seq_kv;
  std::int64_t head_dim, head_dim_v;
  float scale;
};

// The 16-deep slice product shared by both GEMMs: acc[x][y] += A[ty + 16x] * B[tx + 16y].
__device__ __forceinline__ void tile_product(const float (&a_s)[kStep][kTile + 1],
                                             const float (&b_s)[kStep][kTile + 1], float (&acc)[4][4], int tx,
                                             int ty) {
#pragma unroll
  for (int kk = 0; kk < kStep; ++kk) {
    float a[4], b[4];
#pragma unroll
    for (int x = 0; x < 4; ++x) a[x] = a_s[kk][ty + 16 * x];
#pragma unroll
    for (int y = 0; y < 4; ++y) b[y] = b_s[kk][tx + 16 * y];
#pragma unroll
    for (int x = 0; x < 4; ++x)
#pragma unroll
      for (int y = 0; y < 4; ++y) acc[x][y] = fmaf(a[x], b[y], acc[x][y]);
  }
}

// grid (ceil(Sk/64), ceil(Sq/64), B*Hq): S[bh][i][j] = scale * sum_d Q[b,i,h,d] K[b,j,hk,d].
template <typename T>
__global__ void __launch_bounds__(kThreads)
    scores_kernel(const T* __restrict__ q, const T* __restrict__ k, float* __restrict__ s, NaiveParams p) {
  __shared__ float a_s[kStep][kTile + 1];  // Q slice, [d][row]
  __shared__ float b_s[kStep][kTile + 1];  // K slice, [d][key]
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % 16, ty = tid / 16;
  const unsigned bh = blockIdx.z;
  const unsigned b = bh / p.heads_q, h = bh % p.heads_q, hk = h / p.group;
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const std::int64_t q_ld = p.heads_q * p.head_dim, k_ld = p.heads_kv * p.head_dim;
  const T* q_base = q + (b * p.seq_q * p.heads_q + h) * p.head_dim;
  const T* k_base = k + (b * p.seq_kv * p.heads_kv + hk) * p.head_dim;

  float acc[4][4] = {};
  for (std::int64_t d0 = 0; d0 < p.head_dim; d0 += kStep) {
#pragma unroll
    for (int e = 0; e < kTile * kStep / kThreads; ++e) {
      const int idx = tid + kThreads * e;
      const int m = idx / kStep, kk = idx % kStep;
      const std::int64_t d = d0 + kk, i = i0 + m, j = j0 + m;
      a_s[kk][m] = (i < p.seq_q && d < p.head_dim) ? to_float(q_base[i * q_ld + d]) : 0.0f;
      b_s[kk][m] = (j < p.seq_kv && d < p.head_dim) ? to_float(k_base[j * k_ld + d]) : 0.0f;
    }
    __syncthreads();
    tile_product(a_s, b_s, acc, tx, ty);
    __syncthreads();
  }
  float* s_base = s + static_cast<std::int64_t>(bh) * p.seq_q * p.seq_kv;
#pragma unroll
  for (int x = 0; x < 4; ++x)
#pragma unroll
    for (int y = 0; y < 4; ++y) {
      const std::int64_t i = i0 + ty + 16 * x, j = j0 + tx + 16 * y;
      if (i < p.seq_q && j < p.seq_kv) s_base[i * p.seq_kv + j] = acc[x][y] * p.scale;
    }
}

// grid (ceil(Dv/64), ceil(Sq/64), B*Hq): O[b,i,h,c] = sum_j P[bh][i][j] V[b,j,hk,c], over all Sk keys.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    pv_kernel(const float* __restrict__ pm, const T* __restrict__ v, T* __restrict__ o, NaiveParams p) {
  __shared__ float a_s[kStep][kTile + 1];  // P slice, [key][row]
  __shared__ float b_s[kStep][kTile + 1];  // V slice, [key][column]
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % 16, ty = tid / 16;
  const unsigned bh = blockIdx.z;
  const unsigned b = bh / p.heads_q, h = bh % p.heads_q, hk = h / p.group;
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const std::int64_t v_ld = p.heads_kv * p.head_dim_v;
  const float* p_base = pm + static_cast<std::int64_t>(bh) * p.seq_q * p.seq_kv;
  const T* v_base = v + (b * p.seq_kv * p.heads_kv + hk) * p.head_dim_v;

  float acc[4][4] = {};
  for (std::int64_t j0 = 0; j0 < p.seq_kv; j0 += kStep) {
#pragma unroll
    for (int e = 0; e < kTile * kStep / kThreads; ++e) {
      const int idx = tid + kThreads * e;
      const int m = idx / kStep, kk = idx % kStep;  // P: consecutive threads walk a row
      const std::int64_t i = i0 + m, j = j0 + kk;
      a_s[kk][m] = (i < p.seq_q && j < p.seq_kv) ? p_base[i * p.seq_kv + j] : 0.0f;
      const int n = idx % kTile, kv = idx / kTile;  // V: consecutive threads walk a row
      const std::int64_t jv = j0 + kv, c = c0 + n;
      b_s[kv][n] = (jv < p.seq_kv && c < p.head_dim_v) ? to_float(v_base[jv * v_ld + c]) : 0.0f;
    }
    __syncthreads();
    tile_product(a_s, b_s, acc, tx, ty);
    __syncthreads();
  }
#pragma unroll
  for (int x = 0; x < 4; ++x)
#pragma unroll
    for (int y = 0; y < 4; ++y) {
      const std::int64_t i = i0 + ty + 16 * x, c = c0 + tx + 16 * y;
      if (i < p.seq_q && c < p.head_dim_v)
        o[((b * p.seq_q + i) * p.heads_q + h) * p.head_dim_v + c] = from_float<T>(acc[x][y]);
    }
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::string naive_why_not(const Problem& p, const Knobs&) {
  if (p.batch * p.heads_q > kMaxGridYZ)
    return "batch*heads_q = " + std::to_string(p.batch * p.heads_q) +
           ": naive.unfused puts (b, h) on grid.z, at most 65535";
  if (ceil_div(p.seq_q, kTile) > kMaxGridYZ)
    return "seq_q = " + std::to_string(p.seq_q) +
           ": naive.unfused puts 64-row tiles on grid.y, at most 65535";
  if (ceil_div(p.seq_kv, kTile) > INT_MAX || p.batch * p.heads_q * p.seq_q > INT_MAX)
    return "seq_q/seq_kv: the grid of naive.unfused overflows (B*Hq*Sq rows must fit in grid.x)";
  return row_softmax_select_why_not(p, "naive.unfused");
}

class NaiveUnfusedKernel final : public PreparedKernel {
 public:
  explicit NaiveUnfusedKernel(const Problem& p)
      : m_problem(p), m_selected(p.select.active() ? selected_block_table(p) : std::vector<std::int32_t>{}) {}

  // S and then P in place, fp32 [B, Hq, Sq, Sk].
  std::size_t workspace_bytes() const override {
    const auto& p = m_problem;
    return static_cast<std::size_t>(p.batch * p.heads_q * p.seq_q * p.seq_kv) * sizeof(float);
  }
  bool writes_lse() const override { return true; }

  void run(const AttentionArgs& a) override {
    const auto& pr = m_problem;
    check_workspace(a, workspace_bytes(), "naive.unfused");
    auto stream = static_cast<cudaStream_t>(a.stream);
    auto* s = static_cast<float*>(a.workspace);
    const NaiveParams np{static_cast<unsigned>(pr.heads_q),
                         static_cast<unsigned>(pr.heads_kv),
                         static_cast<unsigned>(pr.heads_q / pr.heads_kv),
                         pr.seq_q,
                         pr.seq_kv,
                         pr.head_dim,
                         pr.head_dim_v,
                         a.scale};
    const auto bh = static_cast<unsigned>(pr.batch * pr.heads_q);
    const auto row_tiles = static_cast<unsigned>(ceil_div(pr.seq_q, kTile));
    const dim3 scores_grid(static_cast<unsigned>(ceil_div(pr.seq_kv, kTile)), row_tiles, bh);
    const dim3 pv_grid(static_cast<unsigned>(ceil_div(pr.head_dim_v, kTile)), row_tiles, bh);
    const auto rows = static_cast<unsigned>(pr.batch * pr.heads_q * pr.seq_q);
    RowSoftmaxParams sp{make_device_mask(pr), pr.seq_q, pr.seq_kv, 1.0f};  // S is already scaled
    sp.mask.sel = m_selected.get();

    dispatch_dtype(pr.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      scores_kernel<T><<<scores_grid, kThreads, 0, stream>>>(static_cast<const T*>(a.q),
                                                             static_cast<const T*>(a.k), s, np);
      ATTN_CUDA_CHECK_LAUNCH("naive.unfused scores_kernel");
      masked_softmax_rows<float><<<rows, kSoftmaxThreads, 0, stream>>>(s, s, a.lse, sp);
      ATTN_CUDA_CHECK_LAUNCH("naive.unfused masked_softmax_rows");
      pv_kernel<T><<<pv_grid, kThreads, 0, stream>>>(s, static_cast<const T*>(a.v), static_cast<T*>(a.o), np);
      ATTN_CUDA_CHECK_LAUNCH("naive.unfused pv_kernel");
    });
  }

 private:
  Problem m_problem;
  DeviceInt32Array m_selected;  // a selected branch's index tensor (selected_blocks.hpp)
};

}  // namespace

KernelSpec make_naive_unfused_spec() {
  KernelSpec s;
  s.id = "naive.unfused";
  s.description =
      "standard attention: tiled S = QK^T, in-place masked softmax, O = PV; fp32 O(S^2) workspace";
  s.backend = Backend::cuda;
  s.compressed_mask = true;
  s.selected_branch = true;
  s.why_not = naive_why_not;
  s.prepare = [](const Problem& p, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<NaiveUnfusedKernel>(p);
  };
  return s;
}

}  // namespace attn
