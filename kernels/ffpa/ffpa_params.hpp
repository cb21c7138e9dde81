// ffpa.l1: the parameter block one launch reads: fa2.mma's (pointers, BSHD strides, sizes, the
// folded softmax scale and the mask band, filled by fa2::fill_params) plus the head dim, which is a
// runtime value here: a kernel is compiled for a head-dim capacity and loops over D in chunks of
// columns, so one instantiation serves every multiple of 32 up to its capacity.
#pragma once
#include "kernels/fa2/fa2_params.hpp"

namespace attn::ffpa {

struct FfpaParams : fa2::Fa2Params {
  int head_dim = 0;  // a multiple of 32, at most the kernel's capacity
};

}  // namespace attn::ffpa
