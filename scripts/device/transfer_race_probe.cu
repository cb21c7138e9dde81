// Issue 24 item 9, the cause in isolation: a pageable host->device cudaMemcpy (legacy stream)
// followed by work on a cudaStreamNonBlocking stream. The copy may return once the host data is
// staged, before the last DMA lands, and the non-blocking stream does not wait for the legacy
// stream, so the next kernel can read the tail of its inputs stale. Counts stale words per round
// for the legacy path and for the stream-ordered path the engine now uses (async + sync).
// Build and run on the device: nvcc -O2 -o /tmp/probe scripts/device/transfer_race_probe.cu && /tmp/probe
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                                     \
  do {                                                                               \
    cudaError_t e = (x);                                                             \
    if (e != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

// SM threads, not a copy engine: copies on one engine queue are ordered among themselves.
__global__ void copy_words(std::uint32_t* dst, const std::uint32_t* src, std::size_t words) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < words;
       i += std::size_t{gridDim.x} * blockDim.x)
    dst[i] = src[i];
}

int main() {
  constexpr std::size_t kWords = std::size_t{64} << 20;  // 256 MiB
  constexpr std::size_t kTail = 16384;
  constexpr int kRounds = 32;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::uint32_t *dst, *probe;
  CHECK(cudaMalloc(&dst, kWords * 4));
  CHECK(cudaMalloc(&probe, kTail * 4));
  std::vector<std::uint32_t> host(kWords), back(kTail);
  for (int ordered = 0; ordered <= 1; ++ordered) {
    int rounds_stale = 0;
    std::size_t words_stale = 0;
    for (int round = 1; round <= kRounds; ++round) {
      const std::uint32_t seed = static_cast<std::uint32_t>(round + 100 * ordered) * 0x9E3779B9u;
      for (std::size_t i = 0; i < kWords; ++i) host[i] = seed + static_cast<std::uint32_t>(i);
      if (ordered) {
        CHECK(cudaMemcpyAsync(dst, host.data(), kWords * 4, cudaMemcpyHostToDevice, s));
        CHECK(cudaStreamSynchronize(s));
      } else {
        CHECK(cudaMemcpy(dst, host.data(), kWords * 4, cudaMemcpyHostToDevice));
      }
      copy_words<<<64, 256, 0, s>>>(probe, dst + (kWords - kTail), kTail);
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpyAsync(back.data(), probe, kTail * 4, cudaMemcpyDeviceToHost, s));
      CHECK(cudaStreamSynchronize(s));
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < kTail; ++i) wrong += back[i] != host[kWords - kTail + i];
      rounds_stale += wrong != 0;
      words_stale += wrong;
    }
    std::printf(
        "%s: %d of %d rounds read a stale tail (%zu stale words of %zu)\n",
        ordered ? "stream-ordered cudaMemcpyAsync+sync" : "legacy cudaMemcpy then non-blocking stream",
        rounds_stale, kRounds, words_stale, kTail * kRounds);
  }
  return 0;
}
