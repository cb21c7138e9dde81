// fa3.wgmma launch entry points, one per (dtype, head dim), each defined in its own instantiation
// file under inst/ (sm_90a only).
#pragma once
#include "kernels/api/dtype.hpp"
#include "kernels/fa3/fa3_params.hpp"
#include "kernels/fa3/fa3_traits.hpp"

namespace attn::fa3 {

// Launches the forward with `tile` (one of the head dim's compiled tiles) on `stream` (a
// cudaStream_t); the tensor maps in `p` are already encoded for it.
template <DType kType, int kD>
void run_fa3(const Fa3Params& p, const Tile& tile, void* stream);

}  // namespace attn::fa3
