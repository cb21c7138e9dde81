// fa2.mma's backward (fa2_backward.cu): FlashAttention-2's backward on mma.sync, D 32 to 256.
#pragma once
#include <cstddef>
#include <string>

#include "kernels/api/kernel_spec.hpp"

namespace attn::fa2 {

// Empty when the backward takes `p` (which the forward takes); else why not, naming the field.
std::string backward_why_not(const Problem& p);

// The key-block kernel's tiles on a GPU that gives `smem_optin` bytes of shared memory a block:
// double-buffered Q/dO (75-211 KiB) where they fit, else the lean single-buffered ones (115-147 KiB, at
// D 64, 128, 192, 224 and 256: what sm_80's 163 KiB hold); `requested` (knob bwd_buffers) 1 or 2 forces
// one, 0 chooses. buffers = 0 and why_not says why when none fits (or the knob asks for what D lacks).
struct BackwardTiles {
  int buffers = 0;
  std::size_t smem_bytes = 0;
  std::string why_not;
};
BackwardTiles backward_tiles(const Problem& p, int requested, std::size_t smem_optin);

// dQ's fp32 accumulator (per query head the tokens plus 128 rows of padding a sequence, each query
// block's region in its atomics' order: BwdParams), the row sums D_i = dO_i . O_i [B, Hq, Sq] and
// LSE log2(e) in LSE's layout (a varlen batch: [total_q, Hq] and [Hq, len] per sequence).
std::size_t backward_workspace_bytes(const Problem& p);

// Enqueues on a.stream: the accumulator zeroed (a memset), the row sums, the key-block kernel, dQ
// converted to the dtype. A varlen batch passes its device prefix sums (batch + 1 each)
// and sequence order (longest first), as the forward's Fa2Params::cu_q, cu_kv and seq_order; a dense
// one passes null. `buffers` is backward_tiles(...).buffers.
void run_backward(const Problem& p, const BackwardArgs& a, int buffers, const int* cu_q = nullptr,
                  const int* cu_kv = nullptr, const int* seq_order = nullptr);

}  // namespace attn::fa2
