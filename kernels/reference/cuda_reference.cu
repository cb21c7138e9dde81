// cuda.reference: the GPU oracle for cases too large for the CPU. Exact for every mask (the
// DeviceMask band test), fp32 accumulation and an fp32 online softmax, any D and Dv, writes LSE.
// One block per (b, h, 64 query rows, 64 or 128 output columns), 256 threads in a 16 x 16 grid:
// thread (ty, tx) owns rows ty + 16 u and keys tx + 16 t (u, t < 4) of a 64-key tile, and columns
// 4 tx .. 4 tx + 3 (+ 64) of O. Every value a thread reads from shared memory is a 4-wide vector
// that feeds 4 rows or 4 keys (register tiling, as in a SIMT GEMM): the kernel is bound by the
// fp32 pipe, not by shared-memory loads (the one-value-per-load version reached 9-14 TFLOPS on the
// H100, docs/PERF.md). D is walked in 32-wide slices and V in 16-key stages, so shared memory stays
// under 48 KiB whatever the head size; a block with Dv > 128 recomputes the same scores.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/selected_blocks.hpp"
#include "kernels/api/sequence_views.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/common/device_int32_array.hpp"
#include "kernels/reference/cuda_reference_backward.hpp"
#include "kernels/reference/device_mask.hpp"
#include "kernels/reference/device_types.cuh"

namespace attn {

namespace {

constexpr int kSide = 16;  // the thread grid is kSide x kSide
constexpr int kThreads = kSide * kSide;
constexpr int kPer = 4;                   // rows (u) and keys (t) per thread
constexpr int kRows = kSide * kPer;       // query rows per block
constexpr int kKeys = kSide * kPer;       // keys per tile
constexpr int kDimSlice = 32;             // D elements per shared-memory stage
constexpr int kVKeys = 16;                // keys per V stage
constexpr int kQkStride = kDimSlice + 4;  // padded rows: 16 keys' 4-vectors fall in distinct banks
constexpr int kPStride = kKeys + 4;
constexpr std::int64_t kMaxGridY = 65535;
constexpr int kMaxVCols = 128;  // Dv columns per block at most (kVecs = 2)
// Global loads a thread stages in registers per Q/K slice: all of them are in flight together (a
// load, convert, store loop waits out one L2 latency per element, which held the first version of
// this kernel at 13-15 TFLOPS).
constexpr int kSliceLoads = kRows * kDimSlice / kThreads;
static_assert(kThreads % kDimSlice == 0 && kRows == kKeys, "a thread loads one column of the slices");

struct RefParams {
  DeviceMask mask;
  unsigned heads_q, heads_kv, group;
  std::int64_t seq_q, seq_kv;
  std::int64_t head_dim, head_dim_v;
  unsigned row_tiles;  // ceil(Sq / 64)
  float scale;
};

__device__ __forceinline__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }

// kVecs 4-column groups of O per thread: 1 (Dv <= 64: 64 columns a block) or 2 (128).
template <typename T, int kVecs>
__global__ void __launch_bounds__(kThreads)
    reference_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                     T* __restrict__ o, float* __restrict__ lse, RefParams p) {
  constexpr int kVCols = 64 * kVecs;
  // Q slice [64 rows][32 + 4], K slice [64 keys][32 + 4] or a V stage [16 keys][kVCols], P [64][64 + 4].
  constexpr int kKvFloats = kKeys * kQkStride > kVKeys * kVCols ? kKeys * kQkStride : kVKeys * kVCols;
  __shared__ __align__(16) float q_s[kRows * kQkStride];
  __shared__ __align__(16) float kv_s[kKvFloats];
  __shared__ __align__(16) float p_s[kRows * kPStride];

  const int tid = static_cast<int>(threadIdx.x);
  const int ty = tid / kSide, tx = tid % kSide;
  // 32-bit division (64-bit division is a called subroutine); why_not keeps grid.x under 2^31.
  const unsigned bh = blockIdx.x / p.row_tiles;
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.x % p.row_tiles) * kRows;
  const unsigned b = bh / p.heads_q, h = bh % p.heads_q, hk = h / p.group;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * kVCols;
  std::int64_t row[kPer], first[kPer], last[kPer];
  bool valid[kPer];
#pragma unroll
  for (int u = 0; u < kPer; ++u) {
    row[u] = i0 + ty + kSide * u;
    valid[u] = row[u] < p.seq_q;
    first[u] = valid[u] ? p.mask.first(row[u]) : 0;
    last[u] = valid[u] ? p.mask.last(row[u]) : 0;
  }
  // Visible ranges grow monotonically with i, so the block's keys lie in [first(i0), last(i_end)).
  const std::int64_t i_end = (i0 + kRows < p.seq_q ? i0 + kRows : p.seq_q) - 1;
  const std::int64_t lo = p.mask.first(i0), hi = p.mask.last(i_end);

  const std::int64_t q_ld = p.heads_q * p.head_dim, k_ld = p.heads_kv * p.head_dim;
  const std::int64_t v_ld = p.heads_kv * p.head_dim_v;
  const T* q_base = q + (b * p.seq_q * p.heads_q + h) * p.head_dim;
  const T* k_base = k + (b * p.seq_kv * p.heads_kv + hk) * p.head_dim;
  const T* v_base = v + (b * p.seq_kv * p.heads_kv + hk) * p.head_dim_v;
  const float neg_inf = -__int_as_float(0x7f800000);

  // Slice loads: thread `tid` reads column `lc` of rows lr + kThreads / kDimSlice * n, so a warp
  // reads one row's 32 consecutive elements (coalesced) and writes them along a row of q_s / kv_s.
  const int lc = tid % kDimSlice, lr = tid / kDimSlice;
  constexpr int kRowStep = kThreads / kDimSlice;
  float q_stage[kSliceLoads], k_stage[kSliceLoads];
  const auto load_slice = [&](std::int64_t j0, std::int64_t d0) {
    const std::int64_t d = d0 + lc;
#pragma unroll
    for (int n = 0; n < kSliceLoads; ++n) {
      const std::int64_t ii = i0 + lr + kRowStep * n, j = j0 + lr + kRowStep * n;
      q_stage[n] = (ii < p.seq_q && d < p.head_dim) ? to_float(q_base[ii * q_ld + d]) : 0.0f;
      k_stage[n] = (j < p.seq_kv && d < p.head_dim) ? to_float(k_base[j * k_ld + d]) : 0.0f;
    }
  };
  // A V stage: kVKeys keys x kVCols columns, column `vc` of keys vr + kThreads / kVCols * n.
  constexpr int kVLoads = kVKeys * kVCols / kThreads, kVRowStep = kThreads / kVCols;
  const int vc = tid % kVCols, vr = tid / kVCols;
  float v_stage[kVLoads];
  const auto load_v = [&](std::int64_t key0) {
    const std::int64_t col = c0 + vc;
#pragma unroll
    for (int n = 0; n < kVLoads; ++n) {
      const std::int64_t j = key0 + vr + kVRowStep * n;
      v_stage[n] = (j < p.seq_kv && col < p.head_dim_v) ? to_float(v_base[j * v_ld + col]) : 0.0f;
    }
  };

  float m[kPer], l[kPer];
  float acc[kPer][4 * kVecs] = {};
#pragma unroll
  for (int u = 0; u < kPer; ++u) m[u] = neg_inf, l[u] = 0.0f;
  if (lo < hi) load_slice(lo, 0);
  for (std::int64_t j0 = lo; j0 < hi; j0 += kKeys) {
    float s[kPer][kPer] = {};
    for (std::int64_t d0 = 0; d0 < p.head_dim; d0 += kDimSlice) {
      __syncthreads();  // the previous users of q_s / kv_s are done
#pragma unroll
      for (int n = 0; n < kSliceLoads; ++n) {
        q_s[(lr + kRowStep * n) * kQkStride + lc] = q_stage[n];
        kv_s[(lr + kRowStep * n) * kQkStride + lc] = k_stage[n];
      }
      __syncthreads();
      // The next slice's loads fly while this one is multiplied; after the last slice, V's first
      // stage (its latency then hides under the softmax).
      if (d0 + kDimSlice < p.head_dim)
        load_slice(j0, d0 + kDimSlice);
      else
        load_v(j0);
#pragma unroll 2
      for (int dd = 0; dd < kDimSlice; dd += 4) {
        float4 qv[kPer], kv[kPer];
#pragma unroll
        for (int u = 0; u < kPer; ++u) qv[u] = load4(&q_s[(ty + kSide * u) * kQkStride + dd]);
#pragma unroll
        for (int t = 0; t < kPer; ++t) kv[t] = load4(&kv_s[(tx + kSide * t) * kQkStride + dd]);
#pragma unroll
        for (int u = 0; u < kPer; ++u)
#pragma unroll
          for (int t = 0; t < kPer; ++t) {
            s[u][t] = fmaf(qv[u].x, kv[t].x, s[u][t]);
            s[u][t] = fmaf(qv[u].y, kv[t].y, s[u][t]);
            s[u][t] = fmaf(qv[u].z, kv[t].z, s[u][t]);
            s[u][t] = fmaf(qv[u].w, kv[t].w, s[u][t]);
          }
      }
    }

    // Online softmax of each of the thread's rows; a row's 16 threads are one half of a warp, so
    // xor shuffles below 16 stay inside the row.
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      float tile_max = neg_inf;
#pragma unroll
      for (int t = 0; t < kPer; ++t) {
        const std::int64_t j = j0 + tx + kSide * t;
        s[u][t] =
            (j >= first[u] && j < last[u] && p.mask.selected(b, hk, row[u], j)) ? s[u][t] * p.scale : neg_inf;
        tile_max = fmaxf(tile_max, s[u][t]);
      }
      for (int off = kSide / 2; off > 0; off >>= 1)
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, off));
      const float m_new = fmaxf(m[u], tile_max);
      float correction = 1.0f, tile_sum = 0.0f;
      if (m_new == neg_inf) {  // nothing visible to this row yet
#pragma unroll
        for (int t = 0; t < kPer; ++t) s[u][t] = 0.0f;
      } else {
        correction = expf(m[u] - m_new);  // 0 when m was -inf
#pragma unroll
        for (int t = 0; t < kPer; ++t) {
          s[u][t] = expf(s[u][t] - m_new);  // 0 for masked keys
          tile_sum += s[u][t];
        }
      }
      for (int off = kSide / 2; off > 0; off >>= 1) tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, off);
      l[u] = l[u] * correction + tile_sum;
      m[u] = m_new;
#pragma unroll
      for (int x = 0; x < 4 * kVecs; ++x) acc[u][x] *= correction;
#pragma unroll
      for (int t = 0; t < kPer; ++t) p_s[(ty + kSide * u) * kPStride + tx + kSide * t] = s[u][t];
    }

    for (int k0 = 0; k0 < kKeys; k0 += kVKeys) {
      __syncthreads();  // P is written; nobody reads the K slice or the last V stage any more
#pragma unroll
      for (int n = 0; n < kVLoads; ++n) kv_s[(vr + kVRowStep * n) * kVCols + vc] = v_stage[n];
      __syncthreads();
      // In flight while this stage is multiplied: the next V stage, or the next tile's first slice.
      if (k0 + kVKeys < kKeys)
        load_v(j0 + k0 + kVKeys);
      else if (j0 + kKeys < hi)
        load_slice(j0 + kKeys, 0);
#pragma unroll 2
      for (int c = 0; c < kVKeys; c += 4) {
        float4 pv[kPer];
#pragma unroll
        for (int u = 0; u < kPer; ++u) pv[u] = load4(&p_s[(ty + kSide * u) * kPStride + k0 + c]);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float4 vv[kVecs];
#pragma unroll
          for (int x = 0; x < kVecs; ++x) vv[x] = load4(&kv_s[(c + e) * kVCols + 64 * x + 4 * tx]);
#pragma unroll
          for (int u = 0; u < kPer; ++u) {
            const float pe = e == 0 ? pv[u].x : e == 1 ? pv[u].y : e == 2 ? pv[u].z : pv[u].w;
#pragma unroll
            for (int x = 0; x < kVecs; ++x) {
              acc[u][4 * x + 0] = fmaf(pe, vv[x].x, acc[u][4 * x + 0]);
              acc[u][4 * x + 1] = fmaf(pe, vv[x].y, acc[u][4 * x + 1]);
              acc[u][4 * x + 2] = fmaf(pe, vv[x].z, acc[u][4 * x + 2]);
              acc[u][4 * x + 3] = fmaf(pe, vv[x].w, acc[u][4 * x + 3]);
            }
          }
        }
      }
    }
  }

#pragma unroll
  for (int u = 0; u < kPer; ++u) {
    if (!valid[u]) continue;
    const float inv_l = l[u] > 0.0f ? 1.0f / l[u] : 0.0f;
    T* o_row = o + ((b * p.seq_q + row[u]) * p.heads_q + h) * p.head_dim_v;
#pragma unroll
    for (int x = 0; x < 4 * kVecs; ++x) {
      const std::int64_t col = c0 + 64 * (x / 4) + 4 * tx + x % 4;
      if (col < p.head_dim_v) o_row[col] = from_float<T>(acc[u][x] * inv_l);
    }
    if (lse != nullptr && blockIdx.y == 0 && tx == 0)
      lse[static_cast<std::int64_t>(bh) * p.seq_q + row[u]] = l[u] > 0.0f ? m[u] + logf(l[u]) : neg_inf;
  }
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::string reference_why_not(const Problem& p, const Knobs&) {
  if (p.select.active())
    if (std::string why = selected_table_why_not(p, "cuda.reference", std::int64_t{1} << 30); !why.empty())
      return why;
  if (p.batch * p.heads_q * ceil_div(p.seq_q, kRows) > INT_MAX)
    return "batch*heads_q*ceil(seq_q/64) = " +
           std::to_string(p.batch * p.heads_q * ceil_div(p.seq_q, kRows)) +
           ": cuda.reference puts them on grid.x, at most 2^31-1";
  if (ceil_div(p.head_dim_v, kMaxVCols) > kMaxGridY)
    return "head_dim_v = " + std::to_string(p.head_dim_v) +
           ": cuda.reference puts 128-column blocks on grid.y";
  return {};
}

class CudaReferenceKernel final : public PreparedKernel {
 public:
  explicit CudaReferenceKernel(const Problem& p)
      : m_problem(p), m_selected(p.select.active() ? selected_block_table(p) : std::vector<std::int32_t>{}) {}
  bool writes_lse() const override { return true; }

  void run(const AttentionArgs& a) override {
    if (!m_problem.varlen.active()) return run_dense(m_problem, a);
    // One sequence after the other on the stream, each a dense batch-1 problem at its rows: the
    // oracle's time does not matter, its independence from the kernels' varlen paths does.
    for (std::int64_t b = 0; b < m_problem.batch; ++b)
      run_dense(m_problem.sequence(b), sequence_args(m_problem, a, b));
  }

  std::size_t backward_workspace_bytes() const override { return reference_backward_workspace(m_problem); }
  void run_backward(const BackwardArgs& a) override { reference_backward(m_problem, a); }

 private:
  void run_dense(const Problem& pr, const AttentionArgs& a) const {
    DeviceMask mask = make_device_mask(pr);
    mask.sel = m_selected.get();
    const RefParams rp{mask,
                       static_cast<unsigned>(pr.heads_q),
                       static_cast<unsigned>(pr.heads_kv),
                       static_cast<unsigned>(pr.heads_q / pr.heads_kv),
                       pr.seq_q,
                       pr.seq_kv,
                       pr.head_dim,
                       pr.head_dim_v,
                       static_cast<unsigned>(ceil_div(pr.seq_q, kRows)),
                       a.scale};
    // 64 columns a block up to Dv = 64 (no idle half), 128 above.
    const bool narrow = pr.head_dim_v <= 64;
    const dim3 grid(static_cast<unsigned>(pr.batch * pr.heads_q * ceil_div(pr.seq_q, kRows)),
                    static_cast<unsigned>(narrow ? 1 : ceil_div(pr.head_dim_v, kMaxVCols)));
    auto stream = static_cast<cudaStream_t>(a.stream);
    dispatch_dtype(pr.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto* qp = static_cast<const T*>(a.q);
      const auto* kp = static_cast<const T*>(a.k);
      const auto* vp = static_cast<const T*>(a.v);
      auto* op = static_cast<T*>(a.o);
      if (narrow)
        reference_kernel<T, 1><<<grid, kThreads, 0, stream>>>(qp, kp, vp, op, a.lse, rp);
      else
        reference_kernel<T, 2><<<grid, kThreads, 0, stream>>>(qp, kp, vp, op, a.lse, rp);
      ATTN_CUDA_CHECK_LAUNCH("cuda.reference reference_kernel");
    });
  }

  Problem m_problem;
  DeviceInt32Array m_selected;  // a selected branch's index tensor (selected_blocks.hpp)
};

}  // namespace

KernelSpec make_cuda_reference_spec() {
  KernelSpec s;
  s.id = "cuda.reference";
  s.description =
      "GPU oracle: fp32 online softmax over exactly the visible keys, any D/Dv, writes LSE; exact fp32 "
      "backward (D <= 512)";
  s.backend = Backend::cuda;
  s.compressed_mask = true;
  s.selected_branch = true;
  s.varlen = true;
  s.why_not = reference_why_not;
  s.backward_why_not = [](const Problem& p, const Knobs&) { return reference_backward_why_not(p); };
  s.prepare = [](const Problem& p, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<CudaReferenceKernel>(p);
  };
  return s;
}

}  // namespace attn
