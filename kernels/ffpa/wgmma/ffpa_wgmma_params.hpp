// ffpa.wgmma: ffpa.l1's parameter block plus how the launch splits O's columns into passes.
#pragma once
#include "kernels/ffpa/ffpa_params.hpp"

namespace attn::ffpa_wgmma {

struct WgmmaParams : ffpa::FfpaParams {
  int n_passes = 1;     // CTAs a row block: each produces pass_chunks 64-column chunks of O
  int pass_chunks = 1;  // (the last pass may produce fewer)
  int ring_slots = 0;   // cluster mode: the chunk ring's slots (cluster_ring_slots)
};

}  // namespace attn::ffpa_wgmma
