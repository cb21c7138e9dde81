// ffpa.wgmma: ffpa.l1's parameter block plus how the launch splits O's columns into passes, and the TMA
// tensor maps the host encodes per launch (kernels/common/bshd_tensor_map.hpp). Passed as a
// __grid_constant__ kernel parameter: the TMA unit reads the maps where the parameters live.
#pragma once
#include <cuda.h>

#include "kernels/ffpa/ffpa_params.hpp"

namespace attn::ffpa_wgmma {

struct WgmmaParams : ffpa::FfpaParams {
  int n_passes = 1;     // CTAs a row block: each produces pass_chunks 64-column chunks of O
  int pass_chunks = 1;  // (the last pass may produce fewer)
  CUtensorMap q_map;    // [B, Sq, Hq, D]: boxes of the CTA's rows (64 or 128) x 64 columns
  CUtensorMap k_map;    // [B, Sk, Hkv, D]: boxes of a key tile (Bc keys) x 64 columns
  CUtensorMap v_map;
  int ring_slots =
      0;  // cluster mode and the split form: the chunk ring's slots (cluster_ring_slots, split_ring_slots)
};

}  // namespace attn::ffpa_wgmma
