// The engine's Problem as the plug-in ABI's attn_problem (include/attnscope/plugin.h): what plug-in
// libraries and kernel sources receive.
#pragma once
#include "include/attnscope/plugin.h"
#include "kernels/api/problem.hpp"

namespace attn {

// BSHD strides, the softmax scale, the mask and GQA fields of `p`.
attn_problem to_abi(const Problem& p);

}  // namespace attn
