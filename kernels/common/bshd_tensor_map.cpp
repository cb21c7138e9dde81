#include "kernels/common/bshd_tensor_map.hpp"

#include <cuda_runtime.h>

#include <string>

#include "kernels/api/kernel_spec.hpp"

namespace attn::tma_map {

namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*,
                                 CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                 CUtensorMapFloatOOBfill);

EncodeTiled encode_entry(const char* kernel_id) {
  static const EncodeTiled fn = [kernel_id] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    // 12000: the ABI of cuTensorMapEncodeTiled since CUDA 12.0.
    const cudaError_t st =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found);
    if (st != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr)
      throw KernelError(std::string(kernel_id) + ": the driver has no cuTensorMapEncodeTiled (" +
                        cudaGetErrorString(st) + "); TMA needs a CUDA 12 driver or newer");
    return reinterpret_cast<EncodeTiled>(p);
  }();
  return fn;
}

}  // namespace

BshdBoxes bshd_boxes(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t head_dim,
                     int rows) {
  constexpr std::uint64_t kElem = 2;
  BshdBoxes m;
  m.dims[0] = static_cast<std::uint64_t>(head_dim);
  m.dims[1] = static_cast<std::uint64_t>(heads);
  m.dims[2] = static_cast<std::uint64_t>(seq);
  m.dims[3] = static_cast<std::uint64_t>(batch);
  m.strides[0] = m.dims[0] * kElem;
  m.strides[1] = m.strides[0] * m.dims[1];
  m.strides[2] = m.strides[1] * m.dims[2];
  m.box[0] = kBoxCols;
  m.box[1] = 1;
  m.box[2] = static_cast<std::uint32_t>(rows);
  m.box[3] = 1;
  return m;
}

void encode_bshd_map(CUtensorMap& map, const void* base, DType dtype, const BshdBoxes& boxes,
                     const char* kernel_id) {
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  const CUtensorMapDataType type =
      dtype == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult st =
      encode_entry(kernel_id)(&map, type, 4, const_cast<void*>(base), boxes.dims, boxes.strides, boxes.box,
                              element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (st == CUDA_SUCCESS) return;
  std::string msg = std::string(kernel_id) + ": cuTensorMapEncodeTiled failed with CUresult ";
  msg += std::to_string(static_cast<int>(st));
  msg += " for a [B, S, H, D] = [";
  for (int i = 3; i >= 0; --i) {
    msg += std::to_string(boxes.dims[i]);
    msg += i > 0 ? ", " : "]";
  }
  msg += " tensor (TMA needs a 16-byte aligned base and 16-byte multiple strides)";
  throw KernelError(msg);
}

void encode_qkv_maps(CUtensorMap& q_map, CUtensorMap& k_map, CUtensorMap& v_map, const Problem& p,
                     const AttentionArgs& a, int q_rows, int kv_rows, const char* kernel_id) {
  encode_bshd_map(q_map, a.q, p.dtype, bshd_boxes(p.batch, p.seq_q, p.heads_q, p.head_dim, q_rows),
                  kernel_id);
  encode_bshd_map(k_map, a.k, p.dtype, bshd_boxes(p.batch, p.seq_kv, p.heads_kv, p.head_dim, kv_rows),
                  kernel_id);
  encode_bshd_map(v_map, a.v, p.dtype, bshd_boxes(p.batch, p.seq_kv, p.heads_kv, p.head_dim, kv_rows),
                  kernel_id);
}

}  // namespace attn::tma_map
