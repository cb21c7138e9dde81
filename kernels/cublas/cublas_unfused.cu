// cublas.unfused: PyTorch's "math" SDPA backend on cuBLAS (its backward: cublas_unfused_backward.cu). Four
// launches per forward run:
//   1. fill_pointers: per-(b, h) device pointer arrays for both batched GEMMs (GQA: head h reads
//      kv head h / g, which no single constant stride can express);
//   2. S = Q K^T, one cublasGemmBatchedEx over B*Hq, fp16/bf16 on tensor cores, CUBLAS_COMPUTE_32F,
//      S written in fp32;
//   3. masked_softmax_rows: scale, mask, softmax in fp32, P in the input dtype, LSE;
//   4. O = P V, one cublasGemmBatchedEx, output in the input dtype.
// Why S in fp32: rounding the logits to fp16/bf16 before exp costs up to 2^-8 (fp16, |s|~8) or 2^-5
// (bf16) relative error per weight, which alone would eat the fp16 tolerance; recent PyTorch math
// upcasts for the same reason. Why pointer arrays: one GEMM launch per step for any B, Hq, Hkv;
// strided batching needs B*Hkv launches (BSHD has no single batch stride over (b, h)).
// fp32 inputs use CUBLAS_COMPUTE_32F with the default math mode (no TF32): a true fp32 baseline.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/launch_checks.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/common/device_int32_array.hpp"
#include "kernels/cublas/batch_dims.hpp"
#include "kernels/cublas/cublas_unfused_backward.hpp"
#include "kernels/naive/row_softmax.cuh"
#include "kernels/reference/device_mask.hpp"
#include "kernels/reference/device_types.cuh"

namespace attn {

namespace {

constexpr std::size_t kAlign = 256;                  // [bytes] cuBLAS wants 256-aligned workspace
constexpr std::size_t kCublasWorkspace = 32u << 20;  // [bytes] NVIDIA's recommendation for Hopper
constexpr int kPointerArrays = 6;                    // A, B, C of both GEMMs
constexpr int kFillThreads = 256;

std::size_t align_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// ptrs is [6][B*Hq]: K, Q, S (GEMM 1) and V, P, O (GEMM 2) for each (b, h), in bytes arithmetic.
__global__ void fill_pointers(const char* q, const char* k, const char* v, char* o, char* s, char* pm,
                              const void** ptrs, BatchDims p) {
  const std::int64_t n = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (n >= p.count) return;
  const std::int64_t b = n / p.heads_q, h = n % p.heads_q, hk = h / p.group;
  const std::int64_t e = p.elem_bytes, scores = p.seq_q * p.seq_kv;
  ptrs[0 * p.count + n] = k + (b * p.seq_kv * p.heads_kv + hk) * p.head_dim * e;
  ptrs[1 * p.count + n] = q + (b * p.seq_q * p.heads_q + h) * p.head_dim * e;
  ptrs[2 * p.count + n] = s + n * scores * static_cast<std::int64_t>(sizeof(float));
  ptrs[3 * p.count + n] = v + (b * p.seq_kv * p.heads_kv + hk) * p.head_dim_v * e;
  ptrs[4 * p.count + n] = pm + n * scores * e;
  ptrs[5 * p.count + n] = o + (b * p.seq_q * p.heads_q + h) * p.head_dim_v * e;
}

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::fp16:
      return CUDA_R_16F;
    case DType::bf16:
      return CUDA_R_16BF;
    case DType::fp32:
      return CUDA_R_32F;
  }
  throw KernelError("cublas.unfused: unknown dtype");
}

std::string cublas_why_not(const Problem& p, const Knobs&) {
  // cuBLAS takes int sizes, leading dimensions and batch counts.
  const std::int64_t lims[] = {
      p.batch * p.heads_q,          p.seq_q, p.seq_kv, p.heads_q * p.head_dim, p.heads_q * p.head_dim_v,
      p.batch * p.heads_q * p.seq_q};
  for (std::int64_t v : lims)
    if (v > INT_MAX)
      return "shape " + p.shape_label() +
             ": cublas.unfused passes B*Hq, Sq, Sk, Hq*D, Hq*Dv and B*Hq*Sq as int (at most 2^31-1)";
  return row_softmax_select_why_not(p, "cublas.unfused");
}

class CublasUnfusedKernel final : public PreparedKernel {
 public:
  explicit CublasUnfusedKernel(const Problem& p)
      : m_problem(p), m_selected(p.select.active() ? selected_block_table(p) : std::vector<std::int32_t>{}) {
    ATTN_CUBLAS_CHECK(cublasCreate(&m_handle));
    const auto status = cublasSetMathMode(m_handle, CUBLAS_DEFAULT_MATH);  // no TF32 for fp32 inputs
    if (status != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(m_handle);
      ATTN_CUBLAS_CHECK(status);
    }
    const std::size_t scores = static_cast<std::size_t>(p.batch * p.heads_q * p.seq_q * p.seq_kv);
    const std::size_t count = static_cast<std::size_t>(p.batch * p.heads_q);
    m_p_offset = align_up(scores * sizeof(float));
    m_ptr_offset = m_p_offset + align_up(scores * dtype_bytes(p.dtype));
    m_cublas_offset = m_ptr_offset + align_up(kPointerArrays * count * sizeof(void*));
    m_total = m_cublas_offset + kCublasWorkspace;
  }
  ~CublasUnfusedKernel() override { cublasDestroy(m_handle); }
  CublasUnfusedKernel(const CublasUnfusedKernel&) = delete;
  CublasUnfusedKernel& operator=(const CublasUnfusedKernel&) = delete;

  // [S fp32 | P input dtype | 6 pointer arrays | cuBLAS's own workspace], each 256-aligned.
  std::size_t workspace_bytes() const override { return m_total; }
  bool writes_lse() const override { return true; }

  void run(const AttentionArgs& a) override {
    const auto& pr = m_problem;
    check_workspace(a, m_total, "cublas.unfused");
    auto stream = static_cast<cudaStream_t>(a.stream);
    auto* ws = static_cast<char*>(a.workspace);
    auto* s = reinterpret_cast<float*>(ws);
    char* pm = ws + m_p_offset;
    m_forward_p = pm;  // the backward reads P from here, as autograd keeps the forward's P
    auto* ptrs = reinterpret_cast<const void**>(ws + m_ptr_offset);
    // cublasSetStream resets the workspace to cuBLAS's default pool, so the workspace comes after.
    ATTN_CUBLAS_CHECK(cublasSetStream(m_handle, stream));
    ATTN_CUBLAS_CHECK(cublasSetWorkspace(m_handle, ws + m_cublas_offset, kCublasWorkspace));

    const BatchDims pp = batch_dims(pr);
    const auto count = pp.count;
    const auto fill_blocks = static_cast<unsigned>((count + kFillThreads - 1) / kFillThreads);
    fill_pointers<<<fill_blocks, kFillThreads, 0, stream>>>(
        static_cast<const char*>(a.q), static_cast<const char*>(a.k), static_cast<const char*>(a.v),
        static_cast<char*>(a.o), reinterpret_cast<char*>(s), pm, ptrs, pp);
    ATTN_CUDA_CHECK_LAUNCH("cublas.unfused fill_pointers");

    const int n_batch = static_cast<int>(count);
    const int sq = static_cast<int>(pr.seq_q), sk = static_cast<int>(pr.seq_kv);
    const int d = static_cast<int>(pr.head_dim), dv = static_cast<int>(pr.head_dim_v);
    const cudaDataType_t in_type = cuda_type(pr.dtype);
    const float one = 1.0f, zero = 0.0f;
    auto arr = [&](int which) { return ptrs + which * count; };

    // Column-major view: S^T [Sk x Sq] = (K_bh^T)^T [Sk x D] * Q_bh^T [D x Sq]; BSHD rows of one
    // head are D contiguous elements Hkv*D (K) or Hq*D (Q) apart.
    ATTN_CUBLAS_CHECK(cublasGemmBatchedEx(m_handle, CUBLAS_OP_T, CUBLAS_OP_N, sk, sq, d, &one, arr(0),
                                          in_type, static_cast<int>(pr.heads_kv * pr.head_dim), arr(1),
                                          in_type, static_cast<int>(pr.heads_q * pr.head_dim), &zero,
                                          const_cast<void**>(arr(2)), CUDA_R_32F, sk, n_batch,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));

    RowSoftmaxParams sp{make_device_mask(pr), pr.seq_q, pr.seq_kv, a.scale};
    sp.mask.sel = m_selected.get();
    const auto rows = static_cast<unsigned>(count * pr.seq_q);
    dispatch_dtype(pr.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      masked_softmax_rows<T><<<rows, kSoftmaxThreads, 0, stream>>>(s, reinterpret_cast<T*>(pm), a.lse, sp);
      ATTN_CUDA_CHECK_LAUNCH("cublas.unfused masked_softmax_rows");
    });

    // O_bh^T [Dv x Sq] = V_bh^T [Dv x Sk] * P_bh^T [Sk x Sq].
    ATTN_CUBLAS_CHECK(cublasGemmBatchedEx(m_handle, CUBLAS_OP_N, CUBLAS_OP_N, dv, sq, sk, &one, arr(3),
                                          in_type, static_cast<int>(pr.heads_kv * pr.head_dim_v), arr(4),
                                          in_type, sk, &zero, const_cast<void**>(arr(5)), in_type,
                                          static_cast<int>(pr.heads_q * pr.head_dim_v), n_batch,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  std::size_t backward_workspace_bytes() const override { return cublas_backward_workspace(m_problem); }
  void run_backward(const BackwardArgs& a) override {
    if (!m_forward_p)
      throw KernelError("cublas.unfused: the backward needs this kernel's forward to run first");
    cublas_unfused_backward(m_handle, m_problem, m_forward_p, a);
  }

 private:
  Problem m_problem;
  DeviceInt32Array m_selected;  // a selected branch's index tensor (selected_blocks.hpp)
  cublasHandle_t m_handle = nullptr;
  std::size_t m_p_offset = 0, m_ptr_offset = 0, m_cublas_offset = 0, m_total = 0;
  const void* m_forward_p = nullptr;  // P of the last forward, in its workspace
};

}  // namespace

KernelSpec make_cublas_unfused_spec() {
  KernelSpec s;
  s.id = "cublas.unfused";
  s.description =
      "PyTorch math equivalent: cuBLAS S = QK^T (fp32 out), fused scale-mask-softmax, cuBLAS O = PV; "
      "materialised backward (P kept from the forward)";
  s.backend = Backend::cuda;
  s.compressed_mask = true;
  s.selected_branch = true;
  s.why_not = cublas_why_not;
  s.backward_why_not = [](const Problem& p, const Knobs& k) { return cublas_why_not(p, k); };
  s.prepare = [](const Problem& p, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    return std::make_unique<CublasUnfusedKernel>(p);
  };
  return s;
}

}  // namespace attn
