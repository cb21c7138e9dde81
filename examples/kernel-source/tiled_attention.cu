// @attnscope id: example.tiled_rtc
// @attnscope description: tiled tensor-core forward (mma.sync m16n8k16, 64x64 tiles), compiled at run time
// @attnscope writes_lse
//
// A small FlashAttention-2-style forward written for attnscope's examples: each block takes 64
// query rows (16 per warp), walks the visible key tiles of 64 with an online softmax in registers,
// and keeps K and V tiles in shared memory. fp16 or bf16 in, fp32 accumulation, head_dim 64 or 128.
// The same device code is the CUDA example plug-in (examples/plugins/cuda_tiled.cu includes this
// file), so the two can be timed against each other.
//
// Check it compiles (no GPU needed), then sweep it beside cuDNN:
//   attnscope compile examples/kernel-source/tiled_attention.cu --head-dim 64,128
//   attnscope run --kernel-source examples/kernel-source/tiled_attention.cu
//       --kernels example.tiled_rtc,cudnn.sdpa --seq 1024,4096 --head-dim 64,128
#include <attnscope/kernel_source.h>

namespace tiled {

constexpr int kRows = 64;  // query rows per block
constexpr int kKeys = 64;  // keys per tile
constexpr int kThreads = 128;
constexpr int kPad = 8;  // halves of padding per shared-memory row (bank spread, 16-byte rows)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000u); }

__host__ __device__ constexpr int smem_bytes(int head_dim) { return 2 * kKeys * (head_dim + kPad) * 2; }
// Blocks per SM the register budget is set for (__launch_bounds__): left to itself, ptxas picks
// a few registers more under nvcc than under NVRTC and loses a block per SM.
__host__ __device__ constexpr int min_blocks(int head_dim) { return head_dim <= 64 ? 4 : 3; }

// Two floats packed as (lo, hi) 16-bit values of the element type.
template <bool Bf16>
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  unsigned r;
  if (Bf16)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// c += a * b for one m16n8k16 tile, fp32 accumulation.
template <bool Bf16>
__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  if (Bf16)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The keys query row i sees: [first, last) (include/attnscope/plugin.h's mask rule).
struct Visible {
  long long first, last;
};
__device__ __forceinline__ Visible visible(const attn_problem& p, long long i) {
  const long long diag = i + p.seq_kv - p.seq_q;
  long long first = p.window_left < 0 ? 0 : diag - p.window_left;
  long long last = p.seq_kv;
  if (p.window_right >= 0 && diag + p.window_right + 1 < last) last = diag + p.window_right + 1;
  if (p.causal && diag + 1 < last) last = diag + 1;
  if (first < 0) first = 0;
  return {first, last};
}

template <int D, bool Bf16>
__device__ __forceinline__ void attention(const attn_args& args, const attn_problem& p) {
  static_assert(D % 16 == 0, "head_dim must be a multiple of 16");
  constexpr int kRow = D + kPad;  // shared-memory row pitch in halves
  extern __shared__ __align__(16) unsigned short smem[];
  unsigned short* ks = smem;
  unsigned short* vs = smem + kKeys * kRow;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const long long b = blockIdx.z, h = blockIdx.y, hk = h / (p.heads_q / p.heads_kv);
  const long long row0 = static_cast<long long>(blockIdx.x) * kRows;
  const long long r_lo = row0 + warp * 16 + g, r_hi = r_lo + 8;  // this thread's two rows

  const unsigned short* q =
      static_cast<const unsigned short*>(args.q) + b * p.q_strides[0] + h * p.q_strides[2];
  const unsigned short* k =
      static_cast<const unsigned short*>(args.k) + b * p.k_strides[0] + hk * p.k_strides[2];
  const unsigned short* v =
      static_cast<const unsigned short*>(args.v) + b * p.v_strides[0] + hk * p.v_strides[2];
  unsigned short* o = static_cast<unsigned short*>(args.o) + b * p.o_strides[0] + h * p.o_strides[2];

  // Q as A fragments, straight from global memory.
  unsigned qf[D / 16][4];
  auto q_pair = [&](long long r, int d) -> unsigned {
    return r < p.seq_q ? *reinterpret_cast<const unsigned*>(q + r * p.q_strides[1] + d) : 0u;
  };
#pragma unroll
  for (int c = 0; c < D / 16; ++c) {
    qf[c][0] = q_pair(r_lo, c * 16 + 2 * t);
    qf[c][1] = q_pair(r_hi, c * 16 + 2 * t);
    qf[c][2] = q_pair(r_lo, c * 16 + 2 * t + 8);
    qf[c][3] = q_pair(r_hi, c * 16 + 2 * t + 8);
  }

  // The key range the block's rows see, and the part every row sees whole (no mask needed).
  const long long last_row = row0 + kRows - 1 < p.seq_q ? row0 + kRows - 1 : p.seq_q - 1;
  const Visible top = visible(p, row0), bottom = visible(p, last_row);
  const long long kv_begin = top.first, kv_end = bottom.last;
  const long long full_begin = bottom.first, full_end = top.last;
  const Visible vis_lo = visible(p, r_lo), vis_hi = visible(p, r_hi);

  const float scale_log2 = p.scale * kLog2e;
  float m[2] = {neg_inf(), neg_inf()}, l[2] = {0.f, 0.f};
  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;

  const long long tile0 = kv_begin > 0 ? kv_begin / kKeys * kKeys : 0;
  for (long long k0 = tile0; k0 < kv_end; k0 += kKeys) {
    __syncthreads();                // the previous tile is consumed
    constexpr int kChunks = D / 8;  // 16-byte chunks per row
    for (int i = threadIdx.x; i < kKeys * kChunks; i += kThreads) {
      const int r = i / kChunks, c = (i % kChunks) * 8;
      uint4 kv4 = make_uint4(0, 0, 0, 0), vv4 = make_uint4(0, 0, 0, 0);
      if (k0 + r < p.seq_kv) {
        kv4 = *reinterpret_cast<const uint4*>(k + (k0 + r) * p.k_strides[1] + c);
        vv4 = *reinterpret_cast<const uint4*>(v + (k0 + r) * p.v_strides[1] + c);
      }
      *reinterpret_cast<uint4*>(ks + r * kRow + c) = kv4;
      *reinterpret_cast<uint4*>(vs + r * kRow + c) = vv4;
    }
    __syncthreads();

    // S = Q K^T for this warp's 16 rows and the tile's 64 keys.
    float s[kKeys / 8][4];
#pragma unroll
    for (int j = 0; j < kKeys / 8; ++j) {
      s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
      for (int c = 0; c < D / 16; ++c) {
        const unsigned short* kr = ks + (j * 8 + g) * kRow + c * 16 + 2 * t;
        mma<Bf16>(s[j], qf[c], *reinterpret_cast<const unsigned*>(kr),
                  *reinterpret_cast<const unsigned*>(kr + 8));
      }
    }
    const bool masked = k0 < full_begin || k0 + kKeys > full_end;
#pragma unroll
    for (int j = 0; j < kKeys / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const long long key = k0 + j * 8 + 2 * t + (e & 1);
        const Visible& vis = e < 2 ? vis_lo : vis_hi;
        s[j][e] = masked && (key < vis.first || key >= vis.last) ? neg_inf() : s[j][e] * scale_log2;
      }

    // Online softmax: rows r_lo (e = 0, 1) and r_hi (e = 2, 3), reduced over the quad.
    float alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = m[r];
#pragma unroll
      for (int j = 0; j < kKeys / 8; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * r], s[j][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float base = mx == neg_inf() ? 0.f : mx;  // a row that has seen no key yet
      alpha[r] = exp2f(m[r] - base);
      m[r] = mx;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < kKeys / 8; ++j) {
        s[j][2 * r] = exp2f(s[j][2 * r] - base);
        s[j][2 * r + 1] = exp2f(s[j][2 * r + 1] - base);
        sum += s[j][2 * r] + s[j][2 * r + 1];
      }
      l[r] = l[r] * alpha[r] + sum;
    }
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      acc[n][0] *= alpha[0], acc[n][1] *= alpha[0];
      acc[n][2] *= alpha[1], acc[n][3] *= alpha[1];
    }

    // O += P V: P's accumulators become A fragments; V is read transposed from shared memory.
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      const unsigned pa[4] = {
          pack2<Bf16>(s[2 * kk][0], s[2 * kk][1]), pack2<Bf16>(s[2 * kk][2], s[2 * kk][3]),
          pack2<Bf16>(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack2<Bf16>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
      const unsigned short* v0 = vs + (kk * 16 + 2 * t) * kRow + g;
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        const unsigned short* vc = v0 + n * 8;
        const unsigned b0 = vc[0] | (static_cast<unsigned>(vc[kRow]) << 16);
        const unsigned b1 = vc[8 * kRow] | (static_cast<unsigned>(vc[9 * kRow]) << 16);
        mma<Bf16>(acc[n], pa, b0, b1);
      }
    }
  }

  // Normalise and store; a row that saw no key is 0 with LSE -inf.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
  const float inv[2] = {l[0] > 0.f ? 1.f / l[0] : 0.f, l[1] > 0.f ? 1.f / l[1] : 0.f};
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const long long row = r == 0 ? r_lo : r_hi;
    if (row >= p.seq_q) continue;
    unsigned short* orow = o + row * p.o_strides[1];
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      *reinterpret_cast<unsigned*>(orow + n * 8 + 2 * t) =
          pack2<Bf16>(acc[n][2 * r] * inv[r], acc[n][2 * r + 1] * inv[r]);
    if (args.lse && t == 0)
      args.lse[(b * p.heads_q + h) * p.seq_q + row] = l[r] > 0.f ? (m[r] + log2f(l[r])) * kLn2 : neg_inf();
  }
}

}  // namespace tiled

// What attnscope compiles (ATTN_HEAD_DIM is defined): one entry for this configuration.
#ifdef ATTN_HEAD_DIM
#if ATTN_HEAD_DIM != 64 && ATTN_HEAD_DIM != 128
#error attnscope-unsupported: head_dim must be 64 or 128
#endif
#if ATTN_HEAD_DIM_V != ATTN_HEAD_DIM
#error attnscope-unsupported: head_dim_v must equal head_dim
#endif
#if ATTN_DTYPE == ATTN_FP32
#error attnscope-unsupported: dtype must be fp16 or bf16
#endif

ATTN_LAUNCH(tiled::kThreads, tiled::kRows, tiled::smem_bytes(ATTN_HEAD_DIM));

extern "C" __global__ void __launch_bounds__(tiled::kThreads, tiled::min_blocks(ATTN_HEAD_DIM))
    attn_forward(attn_args args, attn_problem p) {
  tiled::attention<ATTN_HEAD_DIM, ATTN_DTYPE == ATTN_BF16>(args, p);
}
#endif
