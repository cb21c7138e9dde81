// Seeded inputs for a case: standard-normal Q, K, V (never zeros), rounded to the problem's dtype
// so that every backend and the references see exactly the same values.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/api/problem.hpp"

namespace attn {

struct HostInputs {
  std::vector<float> q, k, v;  // fp32 holding dtype-rounded values, BSHD
};

// Deterministic for (problem shape, seed) whatever the thread count: a counter-based generator
// (SplitMix64 over the element index, Box-Muller) fills each tensor; Q, K, V use distinct streams.
HostInputs generate_inputs(const Problem& p, std::uint64_t seed);
// The incoming gradient dO of a backward (the shape of O, dtype-rounded), from its own stream.
std::vector<float> generate_output_gradient(const Problem& p, std::uint64_t seed);

// The generator's stream keys of Q, K and V for `seed`: element pair i of a tensor draws from
// SplitMix64(key ^ 2i) and SplitMix64((key ^ 2i) + 1). dO draws from its own stream, so Q, K and V
// are the same whatever the pass. The CUDA engine runs the same generator on
// the device (profiling/cuda/device_inputs.hpp).
struct InputStreams {
  std::uint64_t q = 0, k = 0, v = 0, d_o = 0;
};
InputStreams input_streams(std::uint64_t seed);

// Packs fp32 values as the dtype's bit pattern (2 bytes for fp16/bf16, 4 for fp32).
std::vector<std::uint8_t> pack_as(DType t, const std::vector<float>& values);
// The inverse: device output bytes to fp32.
std::vector<float> unpack_from(DType t, const void* bytes, std::size_t count);

}  // namespace attn
