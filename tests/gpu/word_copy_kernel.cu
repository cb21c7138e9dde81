#include "tests/gpu/word_copy_kernel.hpp"

namespace attn::test {
namespace {

__global__ void copy_words(std::uint32_t* dst, const std::uint32_t* src, std::size_t words) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < words;
       i += std::size_t{gridDim.x} * blockDim.x)
    dst[i] = src[i];
}

}  // namespace

void copy_words_on_sms(std::uint32_t* dst, const std::uint32_t* src, std::size_t words, cudaStream_t stream) {
  copy_words<<<64, 256, 0, stream>>>(dst, src, words);
}

}  // namespace attn::test
