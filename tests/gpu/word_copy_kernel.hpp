// A copy done by SM threads, not by a copy engine: copies on one engine queue are ordered among
// themselves, so only a kernel shows whether an upload is visible to the next work on a stream.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace attn::test {

void copy_words_on_sms(std::uint32_t* dst, const std::uint32_t* src, std::size_t words, cudaStream_t stream);

}  // namespace attn::test
