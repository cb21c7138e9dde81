// Device properties from the CUDA runtime plus clocks from NVML.
#include "profiling/cuda/cuda_device.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string>

#include "kernels/library_versions.hpp"
#include "profiling/cuda/cuda_status.hpp"
#include "profiling/cuda/nvml_sampler.hpp"
#include "profiling/engine/devices.hpp"

namespace attn {

namespace {

// Empty when the driver library loads; else what failed (the runtime's own error would say
// "driver version is insufficient" even when there is no driver at all).
std::string driver_missing() {
  void* h = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (h) {
    ::dlclose(h);
    return {};
  }
  const char* err = ::dlerror();
  return std::string("libcuda.so.1 cannot be loaded: ") + (err ? err : "unknown error");
}

// nvidia-smi's spelling: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string uuid_text(const cudaUUID_t& u) {
  std::string s = "GPU-";
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    const auto b = static_cast<unsigned char>(u.bytes[i]);
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

}  // namespace

bool probe_cuda_device(std::string* why_not) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (why_not)
      *why_not = cuda_unavailable_reason(cudaGetErrorName(e), cudaGetErrorString(e), driver_missing());
    return false;
  }
  if (count == 0) {
    if (why_not) *why_not = "no CUDA device found";
    return false;
  }
  return true;
}

GpuInfo query_device(int index) {
  cudaDeviceProp prop{};
  ATTN_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  GpuInfo g;
  g.name = prop.name;
  g.cc_major = prop.major;
  g.cc_minor = prop.minor;
  g.sms = prop.multiProcessorCount;
  g.l2_bytes = prop.l2CacheSize;
  g.mem_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  g.mem_bus_bits = prop.memoryBusWidth;
  g.uuid = uuid_text(prop.uuid);
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, index) == cudaSuccess) g.pci_bus_id = bus;
  if (Nvml* nvml = Nvml::instance()) {
    const NvmlReading now = nvml->read(g.pci_bus_id);
    g.sm_clock_mhz = nvml->max_sm_clock_mhz(g.pci_bus_id);
    g.mem_clock_mhz = now.mem_mhz;
  }
  return g;
}

void describe_cuda(RunInfo& run, const GpuInfo& gpu) {
  run.backend = "cuda";
  run.gpu = gpu;
  const LibraryVersions v = library_versions();
  run.cuda_runtime = v.cuda_runtime;
  run.cudnn = v.cudnn;
  run.cupti = v.cupti;
  if (Nvml* nvml = Nvml::instance()) run.driver = nvml->driver_version();
  if (run.driver.empty()) run.driver = "CUDA " + v.cuda_driver;
  const Peaks sheet = datasheet_peaks(gpu.name);
  run.peaks.tensor_tflops_datasheet = sheet.tensor_tflops_datasheet;
  run.peaks.dram_gbps_datasheet = sheet.dram_gbps_datasheet;
}

SystemReport describe_cuda_system() {
  SystemReport s;
  s.libraries = library_versions();
  std::string why;
  if (Nvml* nvml = Nvml::instance()) s.driver = nvml->driver_version();
  if (!probe_cuda_device(&why)) {
    s.none_reason = why;
    return s;
  }
  int count = 0;
  ATTN_CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int i = 0; i < count; ++i) s.gpus.push_back(query_device(i));
  return s;
}

}  // namespace attn
