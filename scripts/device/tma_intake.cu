// How many bytes a clock an H100 SM takes in by TMA while its tensor cores run: the question that
// bounds a one-pass large-D kernel (docs/kernels/ffpa.md, "Large D against cuBLAS"), whose 64-row
// CTAs need 64 bytes a clock at full tensor rate.
//
// Every CTA (persistent, one an SM) streams 8 KiB tiles (64 keys x 64 fp16 columns, 128-byte
// swizzle) of a 16 MiB K tensor (L2-resident) through a ring of mbarrier-guarded slots, as the
// attention kernels stream K and V. In a cluster of C each CTA loads 64 / C rows of every tile into
// all C CTAs (TMA multicast), so L2 reads one tile per cluster. The consumer warpgroups wait for each
// tile and, with `rows` > 0, run S (64 x 64) += Q (64 x 64) K^T on it by wgmma (one warpgroup per 64
// rows: 0.5 MFLOP a tile each) before releasing the slot to the producers of every CTA of the cluster.
//
// Build: nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -o tma_intake
// scripts/device/tma_intake.cu Run:   ./tma_intake   (prints bytes a clock an SM and tensor TFLOPS for each
// cluster size and row count)
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/common/cluster_launch.hpp"
#include "kernels/common/cluster_ptx.cuh"
#include "kernels/common/mma_ptx.cuh"
#include "kernels/common/tma_ptx.cuh"
#include "kernels/common/wgmma_ptx.cuh"

namespace {

constexpr int kKeys = 64, kCols = 64;          // a tile: 64 keys x 64 columns
constexpr int kTileBytes = kKeys * kCols * 2;  // 8 KiB
constexpr int kSlots = 16;                     // ring depth: 128 KiB in flight an SM
constexpr int kSeq = 8192, kDim = 1024;        // K: 8192 x 1024 fp16 = 16 MiB
constexpr int kChunks = kDim / kCols;
constexpr int kQBytes = 2 * 64 * kCols * 2;  // Q for up to two consumer warpgroups
constexpr int kSmem = 1024 + kQBytes + kSlots * kTileBytes + 8 * 2 * kSlots;

#define CHECK(x)                                                                               \
  do {                                                                                         \
    const cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

// Consumer warpgroups WGs (0: none, the producer alone drains), cluster size C.
template <int C, int WGs>
__global__ void __launch_bounds__(128 * (1 + (WGs > 0 ? WGs : 1)), 1)
    intake_kernel(const __grid_constant__ CUtensorMap map, int tiles, unsigned long long* cycles,
                  float* sink) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace attn;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const std::uint32_t base = (ptx::smem_addr(smem_raw) + 1023u) & ~1023u;
  const std::uint32_t q_s = base;
  const std::uint32_t ring = q_s + kQBytes;
  const std::uint32_t bars = ring + kSlots * kTileBytes;
  const auto full = [&](int s) { return bars + 8u * static_cast<std::uint32_t>(s); };
  const auto empty = [&](int s) { return bars + 8u * static_cast<std::uint32_t>(kSlots + s); };
  constexpr int kReleasers = (WGs > 0 ? 4 * WGs : 1) * C;  // consumer warps of every CTA (or producers)
  const int tid = static_cast<int>(threadIdx.x);
  const int rank = C > 1 ? cluster::cta_rank() : 0;
  // Q: zeros, written by the threads and read by wgmma (the async proxy): fenced before the barrier.
  uint4* q_ptr = reinterpret_cast<uint4*>(smem_raw + (q_s - ptx::smem_addr(smem_raw)));
  for (int i = tid; i < kQBytes / 16; i += static_cast<int>(blockDim.x)) q_ptr[i] = make_uint4(0, 0, 0, 0);
  wgmma::fence_proxy_async_smem();
  if (tid == 0) {
    for (int s = 0; s < kSlots; ++s) {
      tma::mbar_init(full(s), 1);
      tma::mbar_init(empty(s), kReleasers);
    }
    tma::fence_mbar_init();
  }
  if constexpr (C > 1) {
    cluster::arrive();
    cluster::wait();
  } else {
    __syncthreads();
  }
  const std::uint32_t peer_base = bars;  // the same offset in every CTA
  const auto release = [&](int s) {
    tma::mbar_arrive(empty(s));
    for (int r = 1; r < C; ++r)
      cluster::mbar_arrive_remote(cluster::map_shared(peer_base, (rank + r) % C) + (empty(s) - bars));
  };
  const unsigned long long t0 = clock64();
  float acc_sum = 0.0f;
  if (tid == 0) {
    int stage = 0;
    std::uint32_t free_parity = 1, parity = 0;
    const int cluster_id = static_cast<int>(blockIdx.x) / C;
    for (int t = 0; t < tiles; ++t) {
      const int tile = t + cluster_id * 7;  // clusters start at different places in K
      const int chunk = tile % kChunks;
      const int key0 = ((tile / kChunks) * kKeys) % kSeq;
      tma::mbar_wait(empty(stage), free_parity);
      tma::mbar_arrive_expect_tx(full(stage), kTileBytes);
      const std::uint32_t dst = ring + static_cast<std::uint32_t>(stage * kTileBytes + rank * kTileBytes / C);
      if constexpr (C == 1)
        tma::load_tile_4d(dst, &map, full(stage), chunk * kCols, 0, key0, 0);
      else
        tma::load_tile_4d_multicast(dst, &map, full(stage), chunk * kCols, 0, key0 + rank * (kKeys / C), 0,
                                    static_cast<std::uint16_t>((1u << C) - 1u));
      if constexpr (WGs == 0) {  // no consumers: the producer waits for its own tile and frees it
        tma::mbar_wait(full(stage), parity);
        release(stage);
      }
      if (++stage == kSlots) {
        stage = 0;
        free_parity ^= 1u;
        parity ^= 1u;
      }
    }
  } else if (WGs > 0 && tid >= 128) {
    const int wg = tid / 128 - 1, lane = tid % 32;
    float s[32];
    for (int i = 0; i < 32; ++i) s[i] = 0.0f;
    int stage = 0;
    std::uint32_t parity = 0;
    const std::uint64_t qd = wgmma::desc_sw128(q_s + static_cast<std::uint32_t>(wg * 64 * 128));
    for (int t = 0; t < tiles; ++t) {
      tma::mbar_wait(full(stage), parity);
      const std::uint64_t kd = wgmma::desc_sw128(ring + static_cast<std::uint32_t>(stage * kTileBytes));
      wgmma::fence_operands(s);
      wgmma::fence();
      for (int kk = 0; kk < kCols / 16; ++kk) wgmma::ss_m64n64k16_f32_f16(s, qd + 2 * kk, kd + 2 * kk, 1);
      wgmma::commit();
      wgmma::wait<0>();
      wgmma::fence_operands(s);
      __syncwarp();
      if (lane == 0) release(stage);
      if (++stage == kSlots) {
        stage = 0;
        parity ^= 1u;
      }
    }
    for (int i = 0; i < 32; ++i) acc_sum += s[i];
  }
  __syncthreads();
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
  if (tid == 128 && sink != nullptr) sink[blockIdx.x] = acc_sum;
  if constexpr (C > 1) {  // no CTA leaves while a peer may still arrive on its barriers
    cluster::arrive();
    cluster::wait();
  }
#else
  __trap();
#endif
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*,
                                 CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                 CUtensorMapFloatOOBfill);

CUtensorMap encode_k(void* k, int box_rows) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
  const cuuint64_t dims[4] = {kDim, 1, kSeq, 1};
  const cuuint64_t strides[3] = {kDim * 2ull, kDim * 2ull, kDim * 2ull * kSeq};  // head (one), key, batch
  const cuuint32_t box[4] = {kCols, 1, static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t estr[4] = {1, 1, 1, 1};
  CUtensorMap map{};
  const CUresult st = reinterpret_cast<EncodeTiled>(fn)(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, k, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (st != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled: %d\n", static_cast<int>(st));
    std::exit(1);
  }
  return map;
}

template <int C, int WGs>
void measure(void* k, int tiles, int sm_count, double clock_ghz) {
  auto kernel = intake_kernel<C, WGs>;
  const int threads = 128 * (1 + (WGs > 0 ? WGs : 1));
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  if (C > 1) CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  int clusters = sm_count / C;
  if (C > 1) {
    attn::ClusterLaunch probe(dim3(static_cast<unsigned>(C)), dim3(static_cast<unsigned>(threads)), kSmem,
                              nullptr, static_cast<unsigned>(C));
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &probe.config) == cudaSuccess && n > 0) clusters = n;
  }
  const int grid = clusters * C;
  const CUtensorMap map = encode_k(k, kKeys / C);
  unsigned long long* cycles = nullptr;
  float* sink = nullptr;
  CHECK(cudaMalloc(&cycles, grid * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&sink, grid * sizeof(float)));
  attn::ClusterLaunch launch(dim3(static_cast<unsigned>(grid)), dim3(static_cast<unsigned>(threads)), kSmem,
                             nullptr, static_cast<unsigned>(C));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaLaunchKernelEx(&launch.config, kernel, map, tiles / 4, cycles, sink));  // warm-up
  CHECK(cudaEventRecord(a));
  CHECK(cudaLaunchKernelEx(&launch.config, kernel, map, tiles, cycles, sink));
  CHECK(cudaEventRecord(b));
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  std::vector<unsigned long long> cyc(grid);
  CHECK(cudaMemcpy(cyc.data(), cycles, grid * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  double mean_cycles = 0;
  for (unsigned long long c : cyc) mean_cycles += static_cast<double>(c) / grid;
  const double bytes_per_sm = static_cast<double>(tiles) * kTileBytes;
  const double flop = WGs > 0 ? 2.0 * 64 * WGs * kKeys * kCols * static_cast<double>(tiles) * grid : 0.0;
  std::printf(
      "cluster %d  rows %3d  CTAs %3d  %7.3f ms  %6.1f B/clk an SM (%5.2f TB/s into SMs, L2 reads %5.2f TB/s)"
      "  tensor %6.1f TFLOPS (%4.1f%% of 4096 FLOP/clk/SM at %.2f GHz)\n",
      C, 64 * WGs, grid, ms, bytes_per_sm / mean_cycles, bytes_per_sm * grid / (ms * 1e-3) / 1e12,
      bytes_per_sm * grid / C / (ms * 1e-3) / 1e12, flop / (ms * 1e-3) / 1e12,
      100.0 * flop / grid / mean_cycles / 4096.0, clock_ghz);
  CHECK(cudaFree(cycles));
  CHECK(cudaFree(sink));
}

}  // namespace

int main(int argc, char** argv) {
  const int tiles = argc > 1 ? std::atoi(argv[1]) : 40000;  // a CTA's tiles: 320 MiB delivered to each SM
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  std::printf("%s, %d SMs, %d tiles of %d bytes a CTA\n", prop.name, prop.multiProcessorCount, tiles,
              kTileBytes);
  void* k = nullptr;
  CHECK(cudaMalloc(&k, static_cast<std::size_t>(kSeq) * kDim * 2));
  CHECK(cudaMemset(k, 0x3c, static_cast<std::size_t>(kSeq) * kDim * 2));  // 1.0-ish halves
  const double ghz = clock_khz * 1e-6;
  const int sms = prop.multiProcessorCount;
  measure<1, 0>(k, tiles, sms, ghz);
  measure<2, 0>(k, tiles, sms, ghz);
  measure<4, 0>(k, tiles, sms, ghz);
  measure<1, 1>(k, tiles, sms, ghz);
  measure<2, 1>(k, tiles, sms, ghz);
  measure<4, 1>(k, tiles, sms, ghz);
  measure<1, 2>(k, tiles, sms, ghz);
  measure<2, 2>(k, tiles, sms, ghz);
  measure<4, 2>(k, tiles, sms, ghz);
  CHECK(cudaFree(k));
  return 0;
}
