// Host entries for the small device kernels cudnn.sdpa needs: the LSE scatter of the query rows
// cuDNN computed (-inf for the leading rows that see no key at all), and the fill of the sequence
// length tensors its backward's padding mask reads.
#pragma once
#include <cstdint>

namespace attn::cudnn {

// For every (b, h) of `bh` = B * Hq rows of `lse` [bh, seq_q]: lse[.., i] = -inf for i < skipped,
// and lse[.., i] = stats[.., i - skipped] for i >= skipped, where stats is packed [bh, seq_q - skipped].
// Enqueued on `stream` (a cudaStream_t); throws attn::KernelError on a launch failure.
void launch_scatter_lse(float* lse, const float* stats, std::int64_t bh, std::int64_t seq_q,
                        std::int64_t skipped, void* stream);

// A varlen batch's LSE from cuDNN's padded stats [B, Hq, max_q]: sequence b's block [Hq, len_b] at
// Hq x cu_q[b], len_b = cu_q[b + 1] - cu_q[b] (cu_q on the device, B + 1 entries).
void launch_scatter_varlen_lse(float* lse, const float* stats, const std::int32_t* cu_q, std::int64_t batch,
                               std::int64_t heads, std::int64_t max_q, void* stream);

// dst[0..n) = value, enqueued on `stream`; throws attn::KernelError on a launch failure.
void launch_fill_int32(std::int32_t* dst, std::int32_t value, std::int64_t n, void* stream);

}  // namespace attn::cudnn
