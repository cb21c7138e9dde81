// Throughput of Hopper's special-function unit for the softmax's exponentials: ex2.approx.f32 (one
// result a lane an instruction) against ex2.approx.f16x2 and ex2.approx.ftz.bf16x2 (two). If the
// packed forms retire two results in the time of one, D 64's MUFU bound (as long as its tensor work,
// docs/PERF.md "Where D 64's time goes") halves for fp16 P.
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -o ex2_throughput ex2_throughput.cu
//   ./ex2_throughput      -> results a clock an SM for each form, and the max error against exp2
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr int kChains = 8;  // independent dependency chains a thread, enough to fill the pipe
constexpr int kIters = 4096;

__device__ __forceinline__ float ex2_f32(float x) {
  float y;
  asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ std::uint32_t ex2_f16x2(std::uint32_t x) {
  std::uint32_t y;
  asm volatile("ex2.approx.f16x2 %0, %1;" : "=r"(y) : "r"(x));
  return y;
}
__device__ __forceinline__ std::uint32_t ex2_bf16x2(std::uint32_t x) {
  std::uint32_t y;
  asm volatile("ex2.approx.ftz.bf16x2 %0, %1;" : "=r"(y) : "r"(x));
  return y;
}

// Each chain feeds its result back as the next input (values stay in (0, 1]: ex2 of a value in
// [-1, 0] is in [0.5, 1], minus 1 is in [-0.5, 0]), so nothing is folded away.
__global__ void bench_f32(float* sink, long long* clocks) {
  float v[kChains];
  for (int c = 0; c < kChains; ++c) v[c] = -0.001f * static_cast<float>(threadIdx.x % 7 + c);
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < kIters; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) v[c] = ex2_f32(v[c]) - 1.0f;
  __syncthreads();
  const long long t1 = clock64();
  float acc = 0.0f;
  for (int c = 0; c < kChains; ++c) acc += v[c];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  if (threadIdx.x == 0) clocks[blockIdx.x] = t1 - t0;
}

template <bool Bf16>
__global__ void bench_x2(float* sink, long long* clocks) {
  std::uint32_t v[kChains];
  const std::uint32_t one = Bf16 ? 0x3f803f80u : 0x3c003c00u;
  for (int c = 0; c < kChains; ++c) v[c] = Bf16 ? 0xbc00bc00u + c : 0x9c009c00u + c;  // small negatives
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < kIters; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      const std::uint32_t e = Bf16 ? ex2_bf16x2(v[c]) : ex2_f16x2(v[c]);
      // minus one, packed: keeps the chain's values in range with one more instruction a result pair
      if constexpr (Bf16) {
        __nv_bfloat162 r = __hsub2(*reinterpret_cast<const __nv_bfloat162*>(&e),
                                   *reinterpret_cast<const __nv_bfloat162*>(&one));
        v[c] = *reinterpret_cast<std::uint32_t*>(&r);
      } else {
        __half2 r = __hsub2(*reinterpret_cast<const __half2*>(&e), *reinterpret_cast<const __half2*>(&one));
        v[c] = *reinterpret_cast<std::uint32_t*>(&r);
      }
    }
  __syncthreads();
  const long long t1 = clock64();
  std::uint32_t acc = 0;
  for (int c = 0; c < kChains; ++c) acc ^= v[c];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = static_cast<float>(acc);
  if (threadIdx.x == 0) clocks[blockIdx.x] = t1 - t0;
}

// Accuracy over the softmax's input range [-30, 0]: each form against exp2 in double, relative.
__global__ void accuracy(const float* x, float* out_f32, float* out_f16, float* out_bf16, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out_f32[i] = ex2_f32(x[i]);
  const __half2 h = __floats2half2_rn(x[i], x[i]);
  const std::uint32_t eh = ex2_f16x2(*reinterpret_cast<const std::uint32_t*>(&h));
  out_f16[i] = __low2float(*reinterpret_cast<const __half2*>(&eh));
  const __nv_bfloat162 b = __floats2bfloat162_rn(x[i], x[i]);
  const std::uint32_t eb = ex2_bf16x2(*reinterpret_cast<const std::uint32_t*>(&b));
  out_bf16[i] = __low2float(*reinterpret_cast<const __nv_bfloat162*>(&eb));
}

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

}  // namespace

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int threads = 1024, blocks = sms;  // one full CTA an SM: 32 warps, 8 a sub-partition
  float* sink = nullptr;
  long long* clocks = nullptr;
  CHECK(cudaMalloc(&sink, sizeof(float) * threads * blocks));
  CHECK(cudaMalloc(&clocks, sizeof(long long) * blocks));
  std::vector<long long> host(blocks);
  const auto report = [&](const char* name, int results_an_instruction, int extra_ops) {
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(host.data(), clocks, sizeof(long long) * blocks, cudaMemcpyDeviceToHost));
    long long worst = 0;
    for (long long c : host) worst = c > worst ? c : worst;
    const double instr = static_cast<double>(threads) * kIters * kChains;  // a CTA = an SM
    std::printf("%-22s %7.2f instructions/clk/SM  %7.2f results/clk/SM  (+%d ALU op a result%s)\n", name,
                instr / static_cast<double>(worst),
                instr * results_an_instruction / static_cast<double>(worst), extra_ops,
                results_an_instruction == 2 ? " pair" : "");
    return 0;
  };
  for (int rep = 0; rep < 2; ++rep) {  // the first round warms the clocks
    bench_f32<<<blocks, threads>>>(sink, clocks);
    if (rep == 1 && report("ex2.approx.ftz.f32", 1, 1)) return 1;
    bench_x2<false><<<blocks, threads>>>(sink, clocks);
    if (rep == 1 && report("ex2.approx.f16x2", 2, 1)) return 1;
    bench_x2<true><<<blocks, threads>>>(sink, clocks);
    if (rep == 1 && report("ex2.approx.ftz.bf16x2", 2, 1)) return 1;
  }

  const int n = 1 << 16;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = -30.0f * static_cast<float>(i) / static_cast<float>(n - 1);
  float *dx = nullptr, *d32 = nullptr, *d16 = nullptr, *db16 = nullptr;
  CHECK(cudaMalloc(&dx, n * 4));
  CHECK(cudaMalloc(&d32, n * 4));
  CHECK(cudaMalloc(&d16, n * 4));
  CHECK(cudaMalloc(&db16, n * 4));
  CHECK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
  accuracy<<<(n + 255) / 256, 256>>>(dx, d32, d16, db16, n);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> r32(n), r16(n), rb(n);
  CHECK(cudaMemcpy(r32.data(), d32, n * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(r16.data(), d16, n * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(rb.data(), db16, n * 4, cudaMemcpyDeviceToHost));
  // Relative error against exp2 of the exact input, and against exp2 of the input as the packed form
  // saw it (rounded to 16 bits): the second isolates the unit's own error from the input's rounding.
  for (const double lo : {-1.0, -4.0, -12.0}) {
    double e32 = 0, e16 = 0, eb = 0, e16_own = 0, eb_own = 0;
    for (int i = 0; i < n; ++i) {
      if (x[i] < lo) continue;
      const double ref = std::exp2(static_cast<double>(x[i]));
      const double x16 = static_cast<double>(__half2float(__float2half_rn(x[i])));
      const double xb = static_cast<double>(__bfloat162float(__float2bfloat16_rn(x[i])));
      e32 = std::fmax(e32, std::fabs(r32[i] - ref) / ref);
      e16 = std::fmax(e16, std::fabs(r16[i] - ref) / ref);
      eb = std::fmax(eb, std::fabs(rb[i] - ref) / ref);
      e16_own = std::fmax(e16_own, std::fabs(r16[i] - std::exp2(x16)) / std::exp2(x16));
      eb_own = std::fmax(eb_own, std::fabs(rb[i] - std::exp2(xb)) / std::exp2(xb));
    }
    std::printf("x in [%g, 0]: max rel error f32 %.2e | f16x2 %.2e (own %.2e) | bf16x2 %.2e (own %.2e)\n", lo,
                e32, e16, e16_own, eb, eb_own);
  }
  return 0;
}
