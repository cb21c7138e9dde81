// Issue 25 probe: does a CUPTI range-profiler pass on one GPU slow down while another GPU is being
// profiled, and does it matter whether the other GPU is profiled by a thread of this process or by
// another process? Each thread owns one device and runs CASES metrics collections (the attnscope
// RangeProfiler, the metric names given) of one small FMA kernel, and prints the mean time a
// collection took and the first metric's value. SESSION: `fresh` ends the profiler's session after
// each collection (as attnscope did before sessions), `keep` leaves it open. Built by hand against
// the project's static libraries (scripts/device/cupti_concurrency.sh says how).
//   cupti_concurrency DEVICES(0 | 0,1) CASES REPLAY(kernel|user) SESSION(fresh|keep) METRIC[,...]
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "profiling/cupti/range_profiler.hpp"

__global__ void fma_loop(float* out, int iters) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.5f;
  for (int i = 0; i < iters; ++i) {
    a = fmaf(a, b, c);
    c = fmaf(c, b, a);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + c;
}

static std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s DEVICES CASES kernel|user fresh|keep METRICS\n", argv[0]);
    return 2;
  }
  const std::vector<std::string> devices = split(argv[1]);
  const int cases = std::atoi(argv[2]);
  const bool kernel_replay = std::string(argv[3]) == "kernel";
  const bool fresh = std::string(argv[4]) == "fresh";
  const std::vector<std::string> names = split(argv[5]);
  std::mutex create_mutex;  // CUPTI's set-up calls are not made from two threads at once
  std::vector<double> mean(devices.size());
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < devices.size(); ++t)
    threads.emplace_back([&, t] {
      const int dev = std::atoi(devices[t].c_str());
      cudaSetDevice(dev);
      cudaFree(nullptr);
      float* out = nullptr;
      cudaMalloc(&out, 132 * 8 * 256 * sizeof(float));
      std::string why;
      std::unique_lock<std::mutex> lock(create_mutex);
      auto profiler = attn::cupti::RangeProfiler::create(names, why);
      lock.unlock();
      if (profiler && std::getenv("SESSION_RANGES"))
        profiler->set_session_ranges(static_cast<std::size_t>(std::atoi(std::getenv("SESSION_RANGES"))));
      if (!profiler) {
        std::fprintf(stderr, "device %d: %s\n", dev, why.c_str());
        std::exit(1);
      }
      auto launch = [&] { fma_loop<<<132 * 8, 256>>>(out, 20000); };
      launch();
      cudaDeviceSynchronize();
      const auto t0 = std::chrono::steady_clock::now();
      double first_value = 0, last_value = 0;
      for (int c = 0; c < cases; ++c) {
        auto rows = profiler->collect(launch, 1, kernel_replay, [] { cudaDeviceSynchronize(); });
        if (rows.size() != 1) std::fprintf(stderr, "device %d: %zu ranges\n", dev, rows.size());
        if (!rows.empty()) (c == 0 ? first_value : last_value) = rows[0].at(names[0]);
        if (fresh) profiler->end_session();
      }
      mean[t] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / cases;
      cudaEvent_t e0, e1;
      cudaEventCreate(&e0);
      cudaEventCreate(&e1);
      cudaEventRecord(e0);
      launch();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      std::printf(
          "device %d: %d collections of %d passes, %s replay, %s sessions: %.1f ms each (kernel %.2f ms; "
          "%s first %.4g last %.4g)\n",
          dev, cases, profiler->passes(), argv[3], argv[4], 1e3 * mean[t], ms, names[0].c_str(), first_value,
          last_value);
    });
  for (auto& th : threads) th.join();
  return 0;
}
