// cuda.reference: the GPU oracle for cases too large for the CPU. Exact for every mask (the
// DeviceMask band test), fp32 accumulation and an fp32 online softmax, any D and Dv, writes LSE.
// One block per (b, h, 32 query rows, 128 output columns); each thread owns two rows (r and r + 16)
// and one lane of 16, so every K or V value read from shared memory serves two rows. D is walked in
// 64-wide slices, Dv in 128-wide blocks (grid.y), so shared memory stays at 48 KiB whatever the head
// size; a block with Dv > 128 recomputes the same scores.
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

constexpr int kRowGroups = 16;     // thread row slots: thread = (slot = tid / 16, lane = tid % 16)
constexpr int kRowsPerThread = 2;  // rows slot and slot + 16
constexpr int kRows = kRowGroups * kRowsPerThread;  // query rows per block
constexpr int kKeys = 64;                           // keys per tile
constexpr int kDimSlice = 64;                       // D elements per shared-memory stage
constexpr int kVCols = 128;                         // Dv columns per block
constexpr int kLanes = 16;
constexpr int kThreads = kRowGroups * kLanes;
constexpr int kKeysPerLane = kKeys / kLanes;   // 4 scores per row per thread
constexpr int kColsPerLane = kVCols / kLanes;  // 8 accumulators per row per thread
constexpr std::int64_t kMaxGridY = 65535;

struct RefParams {
  DeviceMask mask;
  unsigned heads_q, heads_kv, group;
  std::int64_t seq_q, seq_kv;
  std::int64_t head_dim, head_dim_v;
  unsigned row_tiles;  // ceil(Sq / 32)
  float scale;
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    reference_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                     T* __restrict__ o, float* __restrict__ lse, RefParams p) {
  // 48 KiB in all: Q slice [32][64], K slice [64 keys][65] then V tile [64 keys][128], P [32][64].
  __shared__ float q_s[kRows][kDimSlice];
  __shared__ float kv_s[kKeys * kVCols];
  __shared__ float p_s[kRows][kKeys];

  const int tid = static_cast<int>(threadIdx.x);
  const int slot = tid / kLanes, lane = tid % kLanes;
  // 32-bit division (64-bit division is a called subroutine); why_not keeps grid.x under 2^31.
  const unsigned bh = blockIdx.x / p.row_tiles;
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.x % p.row_tiles) * kRows;
  const unsigned b = bh / p.heads_q, h = bh % p.heads_q, hk = h / p.group;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * kVCols;
  std::int64_t row[kRowsPerThread], first[kRowsPerThread], last[kRowsPerThread];
  bool valid[kRowsPerThread];
#pragma unroll
  for (int u = 0; u < kRowsPerThread; ++u) {
    row[u] = i0 + slot + kRowGroups * u;
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

  float m[kRowsPerThread], l[kRowsPerThread];
  float acc[kRowsPerThread][kColsPerLane] = {};
#pragma unroll
  for (int u = 0; u < kRowsPerThread; ++u) m[u] = neg_inf, l[u] = 0.0f;
  for (std::int64_t j0 = lo; j0 < hi; j0 += kKeys) {
    float s[kRowsPerThread][kKeysPerLane] = {};
    for (std::int64_t d0 = 0; d0 < p.head_dim; d0 += kDimSlice) {
      __syncthreads();  // the previous users of q_s / kv_s are done
      for (int idx = tid; idx < kRows * kDimSlice; idx += kThreads) {
        const int rr = idx / kDimSlice, dd = idx % kDimSlice;
        const std::int64_t ii = i0 + rr, d = d0 + dd;
        q_s[rr][dd] = (ii < p.seq_q && d < p.head_dim) ? to_float(q_base[ii * q_ld + d]) : 0.0f;
      }
      for (int idx = tid; idx < kKeys * kDimSlice; idx += kThreads) {
        const int c = idx / kDimSlice, dd = idx % kDimSlice;
        const std::int64_t j = j0 + c, d = d0 + dd;
        kv_s[c * (kDimSlice + 1) + dd] =
            (j < p.seq_kv && d < p.head_dim) ? to_float(k_base[j * k_ld + d]) : 0.0f;
      }
      __syncthreads();
#pragma unroll 8
      for (int dd = 0; dd < kDimSlice; ++dd) {
        const float q0 = q_s[slot][dd], q1 = q_s[slot + kRowGroups][dd];
#pragma unroll
        for (int t = 0; t < kKeysPerLane; ++t) {
          const float kv = kv_s[(lane + kLanes * t) * (kDimSlice + 1) + dd];
          s[0][t] = fmaf(q0, kv, s[0][t]);
          s[1][t] = fmaf(q1, kv, s[1][t]);
        }
      }
    }

    // Online softmax of each of the thread's rows; a row's 16 lanes are one half of a warp, so xor
    // shuffles below 16 stay inside the row.
    float pr[kRowsPerThread][kKeysPerLane];
#pragma unroll
    for (int u = 0; u < kRowsPerThread; ++u) {
      float tile_max = neg_inf;
#pragma unroll
      for (int t = 0; t < kKeysPerLane; ++t) {
        const std::int64_t j = j0 + lane + kLanes * t;
        s[u][t] =
            (j >= first[u] && j < last[u] && p.mask.selected(b, hk, row[u], j)) ? s[u][t] * p.scale : neg_inf;
        tile_max = fmaxf(tile_max, s[u][t]);
      }
      for (int off = kLanes / 2; off > 0; off >>= 1)
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, off));
      const float m_new = fmaxf(m[u], tile_max);
      float correction = 1.0f, tile_sum = 0.0f;
      if (m_new == neg_inf) {  // nothing visible to this row yet
#pragma unroll
        for (int t = 0; t < kKeysPerLane; ++t) pr[u][t] = 0.0f;
      } else {
        correction = expf(m[u] - m_new);  // 0 when m was -inf
#pragma unroll
        for (int t = 0; t < kKeysPerLane; ++t) {
          pr[u][t] = expf(s[u][t] - m_new);  // 0 for masked keys
          tile_sum += pr[u][t];
        }
      }
      for (int off = kLanes / 2; off > 0; off >>= 1) tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, off);
      l[u] = l[u] * correction + tile_sum;
      m[u] = m_new;
#pragma unroll
      for (int x = 0; x < kColsPerLane; ++x) acc[u][x] *= correction;
    }

    __syncthreads();  // every thread is done with the K slice before V overwrites it
#pragma unroll
    for (int u = 0; u < kRowsPerThread; ++u)
#pragma unroll
      for (int t = 0; t < kKeysPerLane; ++t) p_s[slot + kRowGroups * u][lane + kLanes * t] = pr[u][t];
    for (int idx = tid; idx < kKeys * kVCols; idx += kThreads) {
      const int c = idx / kVCols, n = idx % kVCols;
      const std::int64_t j = j0 + c, col = c0 + n;
      kv_s[idx] = (j < p.seq_kv && col < p.head_dim_v) ? to_float(v_base[j * v_ld + col]) : 0.0f;
    }
    __syncthreads();
#pragma unroll 4
    for (int c = 0; c < kKeys; ++c) {
      const float p0 = p_s[slot][c], p1 = p_s[slot + kRowGroups][c];
#pragma unroll
      for (int x = 0; x < kColsPerLane; ++x) {
        const float vv = kv_s[c * kVCols + lane + kLanes * x];
        acc[0][x] = fmaf(p0, vv, acc[0][x]);
        acc[1][x] = fmaf(p1, vv, acc[1][x]);
      }
    }
  }

#pragma unroll
  for (int u = 0; u < kRowsPerThread; ++u) {
    if (!valid[u]) continue;
    const float inv_l = l[u] > 0.0f ? 1.0f / l[u] : 0.0f;
    T* o_row = o + ((b * p.seq_q + row[u]) * p.heads_q + h) * p.head_dim_v;
#pragma unroll
    for (int x = 0; x < kColsPerLane; ++x) {
      const std::int64_t col = c0 + lane + kLanes * x;
      if (col < p.head_dim_v) o_row[col] = from_float<T>(acc[u][x] * inv_l);
    }
    if (lse != nullptr && blockIdx.y == 0 && lane == 0)
      lse[static_cast<std::int64_t>(bh) * p.seq_q + row[u]] = l[u] > 0.0f ? m[u] + logf(l[u]) : neg_inf;
  }
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::string reference_why_not(const Problem& p, const Knobs&) {
  if (p.select.active())
    if (std::string why = selected_table_why_not(p, "cuda.reference", std::int64_t{1} << 30); !why.empty())
      return why;
  if (p.batch * p.heads_q * ceil_div(p.seq_q, kRows) > INT_MAX)
    return "batch*heads_q*ceil(seq_q/32) = " +
           std::to_string(p.batch * p.heads_q * ceil_div(p.seq_q, kRows)) +
           ": cuda.reference puts them on grid.x, at most 2^31-1";
  if (ceil_div(p.head_dim_v, kVCols) > kMaxGridY)
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
    const dim3 grid(static_cast<unsigned>(pr.batch * pr.heads_q * ceil_div(pr.seq_q, kRows)),
                    static_cast<unsigned>(ceil_div(pr.head_dim_v, kVCols)));
    auto stream = static_cast<cudaStream_t>(a.stream);
    dispatch_dtype(pr.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      reference_kernel<T>
          <<<grid, kThreads, 0, stream>>>(static_cast<const T*>(a.q), static_cast<const T*>(a.k),
                                          static_cast<const T*>(a.v), static_cast<T*>(a.o), a.lse, rp);
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
