// cuda.reference's backward: the GPU oracle for gradients of problems too large for the CPU one.
// Plain and exact for every mask rather than fast: one warp per query row computes dQ, one warp per
// key row computes dK and dV (summing the query heads of its KV group), each recomputing the scores
// S, P = exp(S - LSE), dP = dO . V and dS = P * (dP - D) in fp32, after a pass that forms
// D_i = dO_i . O_i. No atomics, so the result does not depend on scheduling.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/api/sequence_views.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/reference/cuda_reference_backward.hpp"
#include "kernels/reference/device_mask.hpp"
#include "kernels/reference/device_types.cuh"

namespace attn {

namespace {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 4;

struct BackwardParams {
  DeviceMask mask;
  std::int64_t batch, heads_q, heads_kv, group, seq_q, seq_kv, head_dim, head_dim_v;
  float scale;
};

__device__ __forceinline__ float warp_sum(float x) {
  for (int off = kWarp / 2; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

// x . y over `n` elements, strided across the warp, summed into every lane.
template <typename A, typename B>
__device__ __forceinline__ float warp_dot(const A* x, const B* y, std::int64_t n, int lane) {
  float s = 0.0f;
  for (std::int64_t d = lane; d < n; d += kWarp) s = fmaf(to_float(x[d]), to_float(y[d]), s);
  return warp_sum(s);
}

// D_i = dO_i . O_i for every query row (b, h, i), stored [B, Hq, Sq] like LSE.
template <typename T>
__global__ void row_dot_kernel(const T* __restrict__ o, const T* __restrict__ d_o, float* __restrict__ dots,
                               BackwardParams p) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  if (row >= p.batch * p.heads_q * p.seq_q) return;
  const std::int64_t bh = row / p.seq_q, i = row % p.seq_q, b = bh / p.heads_q, h = bh % p.heads_q;
  const std::int64_t at = ((b * p.seq_q + i) * p.heads_q + h) * p.head_dim_v;
  const float s = warp_dot(o + at, d_o + at, p.head_dim_v, lane);
  if (lane == 0) dots[row] = s;
}

// dQ of one query row per warp; each lane holds D / 32 (rounded up) accumulators.
template <typename T, int kPerLane>
__global__ void dq_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                          const T* __restrict__ d_o, const float* __restrict__ lse,
                          const float* __restrict__ dots, T* __restrict__ dq, BackwardParams p) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  if (row >= p.batch * p.heads_q * p.seq_q) return;
  const std::int64_t bh = row / p.seq_q, i = row % p.seq_q, b = bh / p.heads_q, h = bh % p.heads_q;
  const std::int64_t hk = h / p.group;
  const T* qr = q + ((b * p.seq_q + i) * p.heads_q + h) * p.head_dim;
  const T* dor = d_o + ((b * p.seq_q + i) * p.heads_q + h) * p.head_dim_v;
  float acc[kPerLane] = {};
  const std::int64_t first = p.mask.first(i), last = p.mask.last(i);
  const float row_lse = lse[row], row_dot = dots[row];
  for (std::int64_t j = first; j < last; ++j) {
    const T* kr = k + ((b * p.seq_kv + j) * p.heads_kv + hk) * p.head_dim;
    const T* vr = v + ((b * p.seq_kv + j) * p.heads_kv + hk) * p.head_dim_v;
    const float s = warp_dot(qr, kr, p.head_dim, lane);
    const float dp = warp_dot(dor, vr, p.head_dim_v, lane);
    const float pj = expf(s * p.scale - row_lse);
    const float ds = pj * (dp - row_dot) * p.scale;
#pragma unroll
    for (int x = 0; x < kPerLane; ++x) {
      const std::int64_t d = lane + kWarp * x;
      if (d < p.head_dim) acc[x] = fmaf(ds, to_float(kr[d]), acc[x]);
    }
  }
  T* out = dq + ((b * p.seq_q + i) * p.heads_q + h) * p.head_dim;
#pragma unroll
  for (int x = 0; x < kPerLane; ++x) {
    const std::int64_t d = lane + kWarp * x;
    if (d < p.head_dim) out[d] = from_float<T>(acc[x]);
  }
}

// dK and dV of one key row per warp, over every query of every head of the KV group that sees it.
template <typename T, int kPerLane>
__global__ void dkv_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                           const T* __restrict__ d_o, const float* __restrict__ lse,
                           const float* __restrict__ dots, T* __restrict__ dk, T* __restrict__ dv,
                           BackwardParams p) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  if (row >= p.batch * p.heads_kv * p.seq_kv) return;
  const std::int64_t bhk = row / p.seq_kv, j = row % p.seq_kv, b = bhk / p.heads_kv, hk = bhk % p.heads_kv;
  const T* kr = k + ((b * p.seq_kv + j) * p.heads_kv + hk) * p.head_dim;
  const T* vr = v + ((b * p.seq_kv + j) * p.heads_kv + hk) * p.head_dim_v;
  float acc_k[kPerLane] = {}, acc_v[kPerLane] = {};
  for (std::int64_t h = hk * p.group; h < (hk + 1) * p.group; ++h) {
    for (std::int64_t i = 0; i < p.seq_q; ++i) {
      if (!p.mask.visible(i, j)) continue;  // uniform across the warp
      const std::int64_t qrow = (b * p.heads_q + h) * p.seq_q + i;
      const T* qr = q + ((b * p.seq_q + i) * p.heads_q + h) * p.head_dim;
      const T* dor = d_o + ((b * p.seq_q + i) * p.heads_q + h) * p.head_dim_v;
      const float s = warp_dot(qr, kr, p.head_dim, lane);
      const float dp = warp_dot(dor, vr, p.head_dim_v, lane);
      const float pj = expf(s * p.scale - lse[qrow]);
      const float ds = pj * (dp - dots[qrow]) * p.scale;
#pragma unroll
      for (int x = 0; x < kPerLane; ++x) {
        const std::int64_t d = lane + kWarp * x;
        if (d < p.head_dim) acc_k[x] = fmaf(ds, to_float(qr[d]), acc_k[x]);
        if (d < p.head_dim_v) acc_v[x] = fmaf(pj, to_float(dor[d]), acc_v[x]);
      }
    }
  }
  T* out_k = dk + ((b * p.seq_kv + j) * p.heads_kv + hk) * p.head_dim;
  T* out_v = dv + ((b * p.seq_kv + j) * p.heads_kv + hk) * p.head_dim_v;
#pragma unroll
  for (int x = 0; x < kPerLane; ++x) {
    const std::int64_t d = lane + kWarp * x;
    if (d < p.head_dim) out_k[d] = from_float<T>(acc_k[x]);
    if (d < p.head_dim_v) out_v[d] = from_float<T>(acc_v[x]);
  }
}

unsigned blocks_for(std::int64_t rows) {
  return static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
}

template <typename T, int kPerLane>
void launch(const Problem& pr, const BackwardArgs& a, const BackwardParams& bp, cudaStream_t stream) {
  auto* dots = static_cast<float*>(a.workspace);
  const dim3 block(kWarp * kWarpsPerBlock);
  row_dot_kernel<T><<<blocks_for(pr.batch * pr.heads_q * pr.seq_q), block, 0, stream>>>(
      static_cast<const T*>(a.o), static_cast<const T*>(a.d_o), dots, bp);
  ATTN_CUDA_CHECK_LAUNCH("cuda.reference row_dot_kernel");
  dq_kernel<T, kPerLane><<<blocks_for(pr.batch * pr.heads_q * pr.seq_q), block, 0, stream>>>(
      static_cast<const T*>(a.q), static_cast<const T*>(a.k), static_cast<const T*>(a.v),
      static_cast<const T*>(a.d_o), a.lse, dots, static_cast<T*>(a.dq), bp);
  ATTN_CUDA_CHECK_LAUNCH("cuda.reference dq_kernel");
  dkv_kernel<T, kPerLane><<<blocks_for(pr.batch * pr.heads_kv * pr.seq_kv), block, 0, stream>>>(
      static_cast<const T*>(a.q), static_cast<const T*>(a.k), static_cast<const T*>(a.v),
      static_cast<const T*>(a.d_o), a.lse, dots, static_cast<T*>(a.dk), static_cast<T*>(a.dv), bp);
  ATTN_CUDA_CHECK_LAUNCH("cuda.reference dkv_kernel");
}

}  // namespace

std::string reference_backward_why_not(const Problem& p) {
  const std::int64_t widest = p.head_dim > p.head_dim_v ? p.head_dim : p.head_dim_v;
  if (widest > kReferenceBackwardMaxDim)
    return "head_dim = " + std::to_string(widest) + ": cuda.reference's backward holds at most " +
           std::to_string(kReferenceBackwardMaxDim) + " columns per warp";
  const std::int64_t rows =
      p.batch * (p.heads_q * p.seq_q > p.heads_kv * p.seq_kv ? p.heads_q * p.seq_q : p.heads_kv * p.seq_kv);
  if ((rows + kWarpsPerBlock - 1) / kWarpsPerBlock > 0x7fffffff)
    return "batch x heads x seq = " + std::to_string(rows) +
           ": more rows than cuda.reference's backward grid holds";
  return {};
}

void reference_backward(const Problem& pr, const BackwardArgs& a) {
  if (pr.varlen.active()) {  // one sequence after the other on the stream: a dense batch-1 problem each
    for (std::int64_t b = 0; b < pr.batch; ++b) reference_backward(pr.sequence(b), sequence_args(pr, a, b));
    return;
  }
  const BackwardParams bp{make_device_mask(pr),
                          pr.batch,
                          pr.heads_q,
                          pr.heads_kv,
                          pr.heads_q / pr.heads_kv,
                          pr.seq_q,
                          pr.seq_kv,
                          pr.head_dim,
                          pr.head_dim_v,
                          a.scale};
  auto stream = static_cast<cudaStream_t>(a.stream);
  const std::int64_t widest = pr.head_dim > pr.head_dim_v ? pr.head_dim : pr.head_dim_v;
  dispatch_dtype(pr.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Few instantiations: up to 128 columns (4 per lane) and up to 512 (16 per lane).
    if (widest <= 128)
      launch<T, 4>(pr, a, bp, stream);
    else
      launch<T, kReferenceBackwardMaxDim / kWarp>(pr, a, bp, stream);
  });
}

}  // namespace attn
