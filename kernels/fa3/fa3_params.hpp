// fa3.wgmma: fa2's parameter block (pointers, BSHD strides, sizes, scale, band) plus the three TMA
// tensor maps the host encodes per launch (kernels/common/bshd_tensor_map.hpp). Passed as a __grid_constant__
// kernel parameter: the TMA unit reads the maps where the parameters live.
#pragma once
#include <cuda.h>

#include "kernels/fa2/fa2_params.hpp"

namespace attn::fa3 {

struct Fa3Params : fa2::Fa2Params {
  int section_heads = 1;  // (batch, head) pairs a section of the work order (fa3_traits.hpp)
  int max_ctas = 0;       // persistent CTAs: at most this many (the SM count); 0 = one a work item
  // [0]: the next work item to draw; [1]: CTAs that have stopped drawing. Zero before and after every
  // launch (the kernel resets them).
  unsigned* work_counter = nullptr;
  CUtensorMap q_map;  // [B, Sq, Hq, D]: boxes of 128 rows x 64 columns
  CUtensorMap k_map;  // [B, Sk, Hkv, D]: boxes of bn keys x 64 columns
  CUtensorMap v_map;
  CUtensorMap o_map;  // [B, Sq, Hq, D]: boxes of 64 rows x 64 columns (the epilogue's TMA stores)
};

}  // namespace attn::fa3
