// Where one (batch, query head)'s rows start in the BSHD tensors [elements], shared by the fa2.mma,
// ffpa.l1 and ffpa.wgmma kernels: Q and O at head h, K and V at head h / group (GQA/MQA).
#pragma once
#include <cstdint>

#include "kernels/fa2/fa2_params.hpp"

namespace attn::fa2 {

__device__ __forceinline__ std::int64_t q_head_offset(const Fa2Params& p, int b, int h, int d) {
  return (static_cast<std::int64_t>(b) * p.seq_q * p.heads_q + h) * d;
}

__device__ __forceinline__ std::int64_t kv_head_offset(const Fa2Params& p, int b, int h, int d) {
  return (static_cast<std::int64_t>(b) * p.seq_kv * p.heads_kv + h / p.group) * d;
}

}  // namespace attn::fa2
