// cublas.unfused's backward (see cublas_unfused_backward.hpp). P comes from the forward, as autograd
// saves it: reads P, dO, O, Q, K, V; five batched GEMMs and two small kernels:
//   dV_h = P^T dO          (per query head, fp32)       dP = dO V^T       (fp32)
//   dS = P * (dP - D) * scale, D_i = dO_i . O_i        (softmax_backward_rows, dS in the input dtype)
//   dQ = dS K              (input dtype)                dK_h = dS^T Q     (per query head, fp32)
//   dK, dV = sums of dK_h, dV_h over each KV group, in the input dtype (reduce_heads)
// GEMMs take fp16/bf16 on tensor cores with fp32 accumulation (CUBLAS_COMPUTE_32F), like the forward.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/cuda_check.hpp"
#include "kernels/cublas/batch_dims.hpp"
#include "kernels/cublas/cublas_unfused_backward.hpp"
#include "kernels/naive/row_softmax.cuh"
#include "kernels/reference/device_types.cuh"

namespace attn {

namespace {

constexpr std::size_t kAlign = 256;
constexpr std::size_t kCublasWorkspace = 32u << 20;
constexpr int kArrays = 15;  // A, B, C of five GEMMs
constexpr int kThreads = 256;

std::size_t align_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct BackwardLayout {
  std::size_t dp = 0, ds = 0, dk_h = 0, dv_h = 0, ptrs = 0, cublas = 0, total = 0;
};

BackwardLayout layout_of(const Problem& p) {
  const auto count = static_cast<std::size_t>(p.batch * p.heads_q);
  const std::size_t scores = count * static_cast<std::size_t>(p.seq_q * p.seq_kv);
  BackwardLayout l;
  l.ds = align_up(scores * sizeof(float));
  l.dk_h = l.ds + align_up(scores * dtype_bytes(p.dtype));
  l.dv_h = l.dk_h + align_up(count * static_cast<std::size_t>(p.seq_kv * p.head_dim) * sizeof(float));
  l.ptrs = l.dv_h + align_up(count * static_cast<std::size_t>(p.seq_kv * p.head_dim_v) * sizeof(float));
  l.cublas = l.ptrs + align_up(kArrays * count * sizeof(void*));
  l.total = l.cublas + kCublasWorkspace;
  return l;
}

struct Bases {
  const char *q, *k, *v, *d_o, *pm;
  char *dq, *dp, *ds, *dk_h, *dv_h;
};

// Pointer arrays [15][B*Hq], per GEMM (A, B, C) in cuBLAS's argument order.
__global__ void fill_backward_pointers(Bases x, const void** ptrs, BatchDims d) {
  const std::int64_t n = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (n >= d.count) return;
  const std::int64_t b = n / d.heads_q, h = n % d.heads_q, hk = h / d.group, e = d.elem_bytes;
  const std::int64_t scores = d.seq_q * d.seq_kv;
  const char* q = x.q + (b * d.seq_q * d.heads_q + h) * d.head_dim * e;
  const char* k = x.k + (b * d.seq_kv * d.heads_kv + hk) * d.head_dim * e;
  const char* v = x.v + (b * d.seq_kv * d.heads_kv + hk) * d.head_dim_v * e;
  const char* d_o = x.d_o + (b * d.seq_q * d.heads_q + h) * d.head_dim_v * e;
  const char* pm = x.pm + n * scores * e;
  char* dq = x.dq + (b * d.seq_q * d.heads_q + h) * d.head_dim * e;
  char* dp = x.dp + n * scores * static_cast<std::int64_t>(sizeof(float));
  char* ds = x.ds + n * scores * e;
  char* dk_h = x.dk_h + n * d.seq_kv * d.head_dim * static_cast<std::int64_t>(sizeof(float));
  char* dv_h = x.dv_h + n * d.seq_kv * d.head_dim_v * static_cast<std::int64_t>(sizeof(float));
  const void* table[kArrays] = {d_o,     pm,      dv_h,  // dV_h = P^T dO
                                v,       d_o,     dp,    // dP = dO V^T
                                k,       ds,      dq,    // dQ = dS K
                                q,       ds,      dk_h,  // dK_h = dS^T Q
                                nullptr, nullptr, nullptr};
  for (int t = 0; t < 12; ++t) ptrs[t * d.count + n] = table[t];
}

// One block per query row (b, h, i): D = dO_i . O_i, then dS_ij = P_ij (dP_ij - D) * scale.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    softmax_backward_rows(const T* __restrict__ pm, const float* __restrict__ dp, const T* __restrict__ o,
                          const T* __restrict__ d_o, T* __restrict__ ds, BatchDims d, float scale) {
  __shared__ float scratch[kThreads / 32];
  const std::int64_t row = blockIdx.x;  // (b * Hq + h) * Sq + i
  const std::int64_t bh = row / d.seq_q, i = row % d.seq_q, b = bh / d.heads_q, h = bh % d.heads_q;
  const std::int64_t at = ((b * d.seq_q + i) * d.heads_q + h) * d.head_dim_v;
  float part = 0.0f;
  for (std::int64_t c = threadIdx.x; c < d.head_dim_v; c += kThreads)
    part = fmaf(to_float(o[at + c]), to_float(d_o[at + c]), part);
  const float dot = block_reduce(part, scratch, SumOp{});
  const T* p_row = pm + row * d.seq_kv;
  const float* dp_row = dp + row * d.seq_kv;
  T* ds_row = ds + row * d.seq_kv;
  for (std::int64_t j = threadIdx.x; j < d.seq_kv; j += kThreads)
    ds_row[j] = from_float<T>(to_float(p_row[j]) * (dp_row[j] - dot) * scale);
}

// out[b, j, hk, c] = sum over the group's query heads h of per_head[(b * Hq + h), j, c].
template <typename T>
__global__ void reduce_heads(const float* __restrict__ per_head, T* __restrict__ out, BatchDims d,
                             std::int64_t width) {
  const std::int64_t n = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t total = d.count / d.heads_q * d.heads_kv * d.seq_kv * width;
  if (n >= total) return;
  const std::int64_t c = n % width, rest = n / width;
  const std::int64_t hk = rest % d.heads_kv, bj = rest / d.heads_kv;  // out is [B, Sk, Hkv, width]
  const std::int64_t j = bj % d.seq_kv, b = bj / d.seq_kv;
  float s = 0.0f;
  for (std::int64_t g = 0; g < d.group; ++g) {
    const std::int64_t h = hk * d.group + g;
    s += per_head[((b * d.heads_q + h) * d.seq_kv + j) * width + c];
  }
  out[n] = from_float<T>(s);
}

cudaDataType_t cuda_type(DType t) {
  return t == DType::fp16 ? CUDA_R_16F : t == DType::bf16 ? CUDA_R_16BF : CUDA_R_32F;
}

}  // namespace

std::size_t cublas_backward_workspace(const Problem& p) { return layout_of(p).total; }

void cublas_unfused_backward(cublasHandle_t handle, const Problem& pr, const void* p_forward,
                             const BackwardArgs& a) {
  const BackwardLayout l = layout_of(pr);
  if (a.workspace_bytes < l.total) throw KernelError("cublas.unfused backward: workspace too small");
  auto stream = static_cast<cudaStream_t>(a.stream);
  auto* ws = static_cast<char*>(a.workspace);
  ATTN_CUBLAS_CHECK(cublasSetStream(handle, stream));
  ATTN_CUBLAS_CHECK(cublasSetWorkspace(handle, ws + l.cublas, kCublasWorkspace));

  const BatchDims d = batch_dims(pr);
  const std::int64_t count = d.count;
  const Bases x{static_cast<const char*>(a.q),
                static_cast<const char*>(a.k),
                static_cast<const char*>(a.v),
                static_cast<const char*>(a.d_o),
                static_cast<const char*>(p_forward),
                static_cast<char*>(a.dq),
                ws + l.dp,
                ws + l.ds,
                ws + l.dk_h,
                ws + l.dv_h};
  auto* ptrs = reinterpret_cast<const void**>(ws + l.ptrs);
  fill_backward_pointers<<<static_cast<unsigned>((count + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      x, ptrs, d);
  ATTN_CUDA_CHECK_LAUNCH("cublas.unfused fill_backward_pointers");

  const int n_batch = static_cast<int>(count);
  const int sq = static_cast<int>(pr.seq_q), sk = static_cast<int>(pr.seq_kv);
  const int dk = static_cast<int>(pr.head_dim), dv = static_cast<int>(pr.head_dim_v);
  const int ld_q = static_cast<int>(pr.heads_q * pr.head_dim),
            ld_k = static_cast<int>(pr.heads_kv * pr.head_dim);
  const int ld_v = static_cast<int>(pr.heads_kv * pr.head_dim_v),
            ld_o = static_cast<int>(pr.heads_q * pr.head_dim_v);
  const cudaDataType_t t = cuda_type(pr.dtype);
  const float one = 1.0f, zero = 0.0f;
  auto arr = [&](int which) { return ptrs + which * count; };
  // Row-major C [M x N] = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS gets B first.
  auto gemm = [&](cublasOperation_t op_b, cublasOperation_t op_a, int m, int n, int k, int first, int ld_b,
                  cudaDataType_t type_b, int ld_a, cudaDataType_t type_a, int ld_c, cudaDataType_t type_c) {
    ATTN_CUBLAS_CHECK(cublasGemmBatchedEx(
        handle, op_b, op_a, m, n, k, &one, arr(first), type_b, ld_b, arr(first + 1), type_a, ld_a, &zero,
        const_cast<void**>(arr(first + 2)), type_c, ld_c, n_batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  // dV_h [Sk x Dv] = P^T [Sk x Sq] dO [Sq x Dv].
  gemm(CUBLAS_OP_N, CUBLAS_OP_T, dv, sk, sq, 0, ld_o, t, sk, t, dv, CUDA_R_32F);
  // dP [Sq x Sk] = dO [Sq x Dv] V^T [Dv x Sk].
  gemm(CUBLAS_OP_T, CUBLAS_OP_N, sk, sq, dv, 3, ld_v, t, ld_o, t, sk, CUDA_R_32F);
  dispatch_dtype(pr.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmax_backward_rows<T><<<static_cast<unsigned>(count * pr.seq_q), kThreads, 0, stream>>>(
        static_cast<const T*>(p_forward), reinterpret_cast<const float*>(x.dp), static_cast<const T*>(a.o),
        static_cast<const T*>(a.d_o), reinterpret_cast<T*>(x.ds), d, a.scale);
    ATTN_CUDA_CHECK_LAUNCH("cublas.unfused softmax_backward_rows");
  });
  // dQ [Sq x D] = dS [Sq x Sk] K [Sk x D].
  gemm(CUBLAS_OP_N, CUBLAS_OP_N, dk, sq, sk, 6, ld_k, t, sk, t, ld_q, t);
  // dK_h [Sk x D] = dS^T [Sk x Sq] Q [Sq x D].
  gemm(CUBLAS_OP_N, CUBLAS_OP_T, dk, sk, sq, 9, ld_q, t, sk, t, dk, CUDA_R_32F);
  dispatch_dtype(pr.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::int64_t nk = pr.batch * pr.seq_kv * pr.heads_kv * pr.head_dim;
    const std::int64_t nv = pr.batch * pr.seq_kv * pr.heads_kv * pr.head_dim_v;
    reduce_heads<T><<<static_cast<unsigned>((nk + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        reinterpret_cast<const float*>(x.dk_h), static_cast<T*>(a.dk), d, pr.head_dim);
    ATTN_CUDA_CHECK_LAUNCH("cublas.unfused reduce_heads (dK)");
    reduce_heads<T><<<static_cast<unsigned>((nv + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        reinterpret_cast<const float*>(x.dv_h), static_cast<T*>(a.dv), d, pr.head_dim_v);
    ATTN_CUDA_CHECK_LAUNCH("cublas.unfused reduce_heads (dV)");
  });
}

}  // namespace attn
