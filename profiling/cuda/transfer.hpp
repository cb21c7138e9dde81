// Host <-> device copies ordered on the engine's stream. The engine's stream is non-blocking, so
// it does not wait for the legacy default stream that plain cudaMemcpy uses; and a pageable
// host-to-device cudaMemcpy may return before its last DMA lands. A kernel enqueued right after
// such a copy could read the tail of its inputs stale (issue 24 item 9: cuda.reference
// disagreeing with cpu.reference on the last rows, after a larger problem had freed that memory).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace attn {

// Copies `bytes` from host `src` to device `dst` on `stream` and waits for the copy to complete,
// so everything enqueued on `stream` afterwards sees the data, and `src` may be freed on return.
void copy_to_device(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

// Waits for the work enqueued on `stream`, then copies `bytes` from device `src` to host `dst`.
void copy_to_host(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

}  // namespace attn
