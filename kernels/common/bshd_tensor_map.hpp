// TMA tensor maps of a BSHD tensor [B, S, H, D] of 16-bit elements read in boxes of `rows` rows x 64
// columns of one head, in the 128-byte swizzle wgmma reads (kernels/common/wgmma_ptx.cuh): used by
// fa3.wgmma and ffpa.wgmma. The shape is plain data (tested without a GPU); encoding goes through the
// driver's cuTensorMapEncodeTiled, found at run time so that the static cudart build needs no libcuda
// link.
#pragma once
#include <cuda.h>

#include <cstdint>

#include "kernels/api/dtype.hpp"
#include "kernels/api/kernel_spec.hpp"

namespace attn::tma_map {

// A box is one 128-byte swizzle atom of 16-bit elements wide.
inline constexpr int kBoxCols = 64;

struct BshdBoxes {
  std::uint64_t dims[4] = {};     // innermost first: D, H, S, B
  std::uint64_t strides[3] = {};  // bytes between consecutive indices of dims 1..3
  std::uint32_t box[4] = {};      // 64 columns, 1 head, `rows` rows, 1 batch
};

BshdBoxes bshd_boxes(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t head_dim,
                     int rows);

// Encodes `boxes` over the tensor at `base`; throws KernelError naming `kernel_id` and the driver's status.
void encode_bshd_map(CUtensorMap& map, const void* base, DType dtype, const BshdBoxes& boxes,
                     const char* kernel_id);

// A run's three input maps: Q over [B, Sq, Hq, D] in boxes of `q_rows` rows, K and V over [B, Sk, Hkv, D]
// in boxes of `kv_rows`.
void encode_qkv_maps(CUtensorMap& q_map, CUtensorMap& k_map, CUtensorMap& v_map, const Problem& p,
                     const AttentionArgs& a, int q_rows, int kv_rows, const char* kernel_id);

}  // namespace attn::tma_map
