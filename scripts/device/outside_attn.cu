// Written by a helper that read only docs/plugins.md and include/attnscope/*.h (issue 18: "a kernel
// written by someone outside the project, from docs/plugins.md alone"); run on the device by
// scripts/device/issue18_final.sh beside cudnn.sdpa. Kept as written.
// @attnscope id: outside.rowwise
// @attnscope description: one warp per query row, lanes over keys for QK^T and over dims for PV, fp32 online
// softmax
// @attnscope writes_lse
// @attnscope option: -maxrregcount=96
//
// Design: a block of ATTN_WARPS warps handles ATTN_WARPS consecutive query rows (one row per warp).
// The warp keeps its query row (fp32, pre-multiplied by scale*log2(e)) in shared memory. Keys are
// visited in chunks of 32 over the row's visible range [first, last): lane t computes the full dot
// product for key kb+t, the chunk max/sum are warp reductions (online softmax in base 2, fp32), and
// the P.V update gives each lane the dims lane, lane+32, ... with p broadcast by shuffles.
#include <attnscope/kernel_source.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#if ATTN_DTYPE == ATTN_FP32
#error attnscope-unsupported: dtype: fp32 is not supported (fp16 and bf16 only)
#endif
#if ATTN_HEAD_DIM != 64 && ATTN_HEAD_DIM != 128
#error attnscope-unsupported: head_dim must be 64 or 128
#endif
#if ATTN_HEAD_DIM_V != ATTN_HEAD_DIM
#error attnscope-unsupported: head_dim_v must equal head_dim
#endif

#define ATTN_WARPS 4
#define NEG_INF __int_as_float(0xff800000)  // NVRTC has no <math.h> INFINITY
#define D ATTN_HEAD_DIM
#define DPL (D / 32)  // dims per lane in the P.V update

ATTN_LAUNCH(32 * ATTN_WARPS, ATTN_WARPS, ATTN_WARPS* D * 4);

#if ATTN_DTYPE == ATTN_FP16
typedef __half elem_t;
__device__ __forceinline__ float to_f(elem_t x) { return __half2float(x); }
__device__ __forceinline__ elem_t from_f(float x) { return __float2half_rn(x); }
#else
typedef __nv_bfloat16 elem_t;
__device__ __forceinline__ float to_f(elem_t x) { return __bfloat162float(x); }
__device__ __forceinline__ elem_t from_f(float x) { return __float2bfloat16_rn(x); }
#endif

__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

extern "C" __global__ void __launch_bounds__(32 * ATTN_WARPS) attn_forward(attn_args args, attn_problem p) {
  extern __shared__ float smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t i = (int64_t)blockIdx.x * ATTN_WARPS + warp;  // query row
  const int64_t h = blockIdx.y, b = blockIdx.z;
  if (i >= p.seq_q) return;  // no block-wide barriers below: a whole warp leaves
  const int64_t hkv = h / (p.heads_q / p.heads_kv);

  const elem_t* q = (const elem_t*)args.q + b * p.q_strides[0] + i * p.q_strides[1] + h * p.q_strides[2];
  const elem_t* k = (const elem_t*)args.k + b * p.k_strides[0] + hkv * p.k_strides[2];
  const elem_t* v = (const elem_t*)args.v + b * p.v_strides[0] + hkv * p.v_strides[2];
  elem_t* o = (elem_t*)args.o + b * p.o_strides[0] + i * p.o_strides[1] + h * p.o_strides[2];
  const int64_t qs3 = p.q_strides[3], ks1 = p.k_strides[1], ks3 = p.k_strides[3];
  const int64_t vs1 = p.v_strides[1], vs3 = p.v_strides[3], os3 = p.o_strides[3];

  // Visible keys: [first, last) around diag = i + seq_kv - seq_q.
  const int64_t diag = i + p.seq_kv - p.seq_q;
  int64_t first = 0, last = p.seq_kv;
  if (p.causal) last = min(last, diag + 1);
  if (p.window_left >= 0) first = max(first, diag - p.window_left);
  if (p.window_right >= 0) last = min(last, diag + p.window_right + 1);

  float* qsh = smem + warp * D;
  const float qscale = p.scale * 1.4426950408889634f;  // scores in log2 units
#pragma unroll
  for (int c = 0; c < DPL; ++c) qsh[lane + 32 * c] = to_f(q[(lane + 32 * c) * qs3]) * qscale;
  __syncwarp();

  float m = NEG_INF, l = 0.f, acc[DPL];
#pragma unroll
  for (int c = 0; c < DPL; ++c) acc[c] = 0.f;

  for (int64_t kb = first; kb < last; kb += 32) {
    const int n = (int)min((int64_t)32, last - kb);  // warp-uniform, >= 1
    float s = NEG_INF;
    if (lane < n) {
      const elem_t* kr = k + (kb + lane) * ks1;
      float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
#pragma unroll 4
      for (int d = 0; d < D; d += 4) {
        d0 += qsh[d + 0] * to_f(kr[(d + 0) * ks3]);
        d1 += qsh[d + 1] * to_f(kr[(d + 1) * ks3]);
        d2 += qsh[d + 2] * to_f(kr[(d + 2) * ks3]);
        d3 += qsh[d + 3] * to_f(kr[(d + 3) * ks3]);
      }
      s = (d0 + d1) + (d2 + d3);
    }
    const float m_new = fmaxf(m, warp_max(s));  // finite: lane 0 is always valid
    const float alpha = exp2f(m - m_new);       // 0 on the first chunk (m = -inf)
    const float pr = (lane < n) ? exp2f(s - m_new) : 0.f;
    l = l * alpha + warp_sum(pr);
    m = m_new;
#pragma unroll
    for (int c = 0; c < DPL; ++c) acc[c] *= alpha;
    for (int t = 0; t < n; ++t) {
      const float pt = __shfl_sync(0xffffffffu, pr, t);
      const elem_t* vr = v + (kb + t) * vs1;
#pragma unroll
      for (int c = 0; c < DPL; ++c) acc[c] += pt * to_f(vr[(lane + 32 * c) * vs3]);
    }
  }

  if (first >= last) {  // a row that sees no key: O = 0, LSE = -inf
#pragma unroll
    for (int c = 0; c < DPL; ++c) o[(lane + 32 * c) * os3] = from_f(0.f);
    if (args.lse != nullptr && lane == 0) args.lse[(b * p.heads_q + h) * p.seq_q + i] = NEG_INF;
    return;
  }
  const float inv = 1.f / l;
#pragma unroll
  for (int c = 0; c < DPL; ++c) o[(lane + 32 * c) * os3] = from_f(acc[c] * inv);
  if (args.lse != nullptr && lane == 0)
    args.lse[(b * p.heads_q + h) * p.seq_q + i] = (m + log2f(l)) * 0.6931471805599453f;
}
