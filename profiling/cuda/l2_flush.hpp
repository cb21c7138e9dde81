// Evicting the L2 between timed samples without leaving dirty lines behind.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace attn {

// Reads `bytes` of `buffer` through L2 (ld.global.cg), so every line the previous launch left in L2
// (dirty outputs included) is evicted and written back now, outside the timed region. A memset
// would instead leave the L2 full of dirty lines that the next, timed launch pays to write back
// (seen as extra DRAM writes in CUPTI/ncu on cases that fit in L2). `sink` (4 bytes) keeps the
// reads from being optimised away.
void launch_l2_flush(const void* buffer, std::size_t bytes, unsigned* sink, cudaStream_t stream);

// Reads `bytes` of `buffer` (a multiple of 16, small enough to stay in L2) `passes` times through
// L2 (ld.global.cg, past L1): the L2 read-bandwidth probe of the peaks measurement.
void launch_l2_read(const void* buffer, std::size_t bytes, int passes, unsigned* sink, cudaStream_t stream);

}  // namespace attn
