// The engine's input generator and output comparison on the GPU, so that a large problem's inputs
// are not drawn on the host and uploaded, and a case's output is not downloaded to be compared
// (issue 22: inputs, reference and check took 23 of the 33 s of a 60-case sweep on the H100).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/api/dtype.hpp"
#include "profiling/engine/check.hpp"

namespace attn {

// `n` standard-normal values of stream `key` (profiling/engine/inputs.hpp: the same SplitMix64 and
// Box-Muller as generate_inputs), rounded to `t` and stored as its bit pattern at `dst`. Enqueued
// on `stream`, not waited for.
void generate_normal_on_device(void* dst, DType t, std::int64_t n, std::uint64_t key, cudaStream_t stream);

// `n` values of type `t` at `src` widened to fp32 at `dst`. Enqueued, not waited for.
void widen_to_fp32_on_device(const void* src, DType t, float* dst, std::int64_t n, cudaStream_t stream);

// compare_outputs (profiling/engine/check.hpp) of `n` values of type `t` at `out` against the fp32
// reference `ref`, both on the device, with fp64 sums; waits for the result.
ErrorStats compare_on_device(const void* out, DType t, const float* ref, std::int64_t n, cudaStream_t stream);

}  // namespace attn
