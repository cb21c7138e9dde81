// The key tiles a block of query rows visits, shared by ffpa.l1 and ffpa.wgmma: the band of
// fa2::Fa2Params (bottom-right diagonal, left/right window, causal folded into right) over rows
// [row0, row0 + rows) gives the visible keys [key_lo, key_hi), as tiles [n_lo, n_hi) of bc keys,
// and the keys every row of the block sees, [full_lo, full_hi): tiles inside it need no mask.
#pragma once
#include "kernels/fa2/fa2_params.hpp"

namespace attn::ffpa {

struct KeyTiles {
  int n_lo = 0, n_hi = 0;        // tiles to visit: n_lo <= n < n_hi (none when equal)
  int full_lo = 0, full_hi = 0;  // keys visible to every row of the block
};

__device__ __forceinline__ KeyTiles key_tiles(const fa2::Fa2Params& p, int row0, int rows, int bc) {
  const int diag_off = p.seq_kv - p.seq_q;
  const int row_last = min(p.seq_q, row0 + rows) - 1;
  int key_lo = 0, key_hi = p.seq_kv;
  KeyTiles t;
  t.full_lo = 0;
  t.full_hi = p.seq_kv;
  if (p.left >= 0) {
    key_lo = max(0, row0 + diag_off - p.left);
    t.full_lo = max(0, row_last + diag_off - p.left);
  }
  if (p.right >= 0) {
    key_hi = min(p.seq_kv, row_last + diag_off + p.right + 1);
    t.full_hi = min(p.seq_kv, row0 + diag_off + p.right + 1);
  }
  t.n_lo = key_lo / bc;
  t.n_hi = key_hi > key_lo ? (key_hi + bc - 1) / bc : t.n_lo;
  return t;
}

}  // namespace attn::ffpa
