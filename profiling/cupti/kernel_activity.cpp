// CUPTI activity (CONCURRENT_KERNEL) collection; see kernel_activity.hpp.
#include "profiling/cupti/kernel_activity.hpp"

#include <cuda_runtime_api.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "profiling/cupti/cupti_api.hpp"

namespace attn::cupti {

namespace {

constexpr std::size_t kBufferBytes = std::size_t{4} << 20;
constexpr std::size_t kAlign = 8;

struct Record {
  std::uint64_t start = 0;
  LaunchStats stats;
};

// CUPTI hands buffers back on its own threads: the records land here under a lock.
std::mutex g_mutex;
std::vector<Record> g_records;

std::string demangle(const char* name) {
  if (!name) return {};
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string s = d;
  std::free(d);
  return s;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  const Api* a = api();
  if (a && valid > 0) {
    CUpti_Activity* rec = nullptr;
    std::lock_guard<std::mutex> lock(g_mutex);
    while (a->activity_next(buffer, valid, &rec) == CUPTI_SUCCESS) {
      if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
        continue;
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      Record r;
      r.start = k->start;
      r.stats.name = demangle(k->name);
      r.stats.grid = {k->gridX, k->gridY, k->gridZ};
      r.stats.block = {k->blockX, k->blockY, k->blockZ};
      r.stats.regs = k->registersPerThread;
      r.stats.smem_static = k->staticSharedMemory;
      r.stats.smem_dynamic = k->dynamicSharedMemory;
      r.stats.local_bytes = k->localMemoryPerThread;
      if (k->sharedMemoryExecuted > 0) r.stats.smem_config = k->sharedMemoryExecuted;
      g_records.push_back(std::move(r));
    }
  }
  std::free(buffer);
}

}  // namespace

std::unique_ptr<KernelActivity> KernelActivity::create(const SmLimits& limits, std::string& unavailable) {
  const Api* a = api(&unavailable);
  if (!a) return nullptr;
  // Registered once per process: CUPTI keeps the callbacks until it unloads.
  static CUptiResult registered = a->activity_register(buffer_requested, buffer_completed);
  if (registered != CUPTI_SUCCESS) {
    unavailable = "cuptiActivityRegisterCallbacks failed: " + a->describe(registered);
    return nullptr;
  }
  std::unique_ptr<KernelActivity> k(new KernelActivity);
  k->m_limits = limits;
  return k;
}

KernelActivity::~KernelActivity() {
  if (m_active)
    if (const Api* a = api()) (void)a->activity_disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

void KernelActivity::begin() {
  const Api* a = api();
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_records.clear();
  }
  const CUptiResult r = a->activity_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS)
    throw std::runtime_error("cuptiActivityEnable(CONCURRENT_KERNEL) failed: " + a->describe(r));
  m_active = true;
}

std::vector<LaunchStats> KernelActivity::end() {
  const Api* a = api();
  const cudaError_t sync = cudaDeviceSynchronize();
  m_active = false;
  const CUptiResult dis = a->activity_disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const CUptiResult flush = a->activity_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (sync != cudaSuccess)
    throw std::runtime_error(std::string("cudaDeviceSynchronize: ") + cudaGetErrorName(sync));
  if (dis != CUPTI_SUCCESS) throw std::runtime_error("cuptiActivityDisable failed: " + a->describe(dis));
  if (flush != CUPTI_SUCCESS) throw std::runtime_error("cuptiActivityFlushAll failed: " + a->describe(flush));
  std::vector<Record> records;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    records.swap(g_records);
  }
  std::stable_sort(records.begin(), records.end(),
                   [](const Record& x, const Record& y) { return x.start < y.start; });
  std::vector<LaunchStats> out;
  for (Record& r : records) {
    const std::int64_t threads = r.stats.block[0] * r.stats.block[1] * r.stats.block[2];
    r.stats.occupancy_theoretical = theoretical_occupancy_pct(
        m_limits, threads, r.stats.regs, r.stats.smem_static + r.stats.smem_dynamic, r.stats.smem_config);
    out.push_back(std::move(r.stats));
  }
  return out;
}

}  // namespace attn::cupti
