// Host entry for the one small device kernel cudnn.sdpa needs: it scatters the LSE of the query
// rows cuDNN computed and writes -inf for the leading rows that see no key at all.
#pragma once
#include <cstdint>

namespace attn::cudnn {

// For every (b, h) of `bh` = B * Hq rows of `lse` [bh, seq_q]: lse[.., i] = -inf for i < skipped,
// and lse[.., i] = stats[.., i - skipped] for i >= skipped, where stats is packed [bh, seq_q - skipped].
// Enqueued on `stream` (a cudaStream_t); throws attn::KernelError on a launch failure.
void launch_scatter_lse(float* lse, const float* stats, std::int64_t bh, std::int64_t seq_q,
                        std::int64_t skipped, void* stream);

}  // namespace attn::cudnn
