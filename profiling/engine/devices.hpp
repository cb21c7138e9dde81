// What GPUs and CUDA libraries this process sees: for `attnscope devices` and run records.
#pragma once
#include <string>
#include <vector>

#include "kernels/library_versions.hpp"
#include "profiling/result.hpp"

namespace attn {

struct SystemReport {
  std::vector<GpuInfo> gpus;
  std::string none_reason;  // why there is no usable GPU, when gpus is empty
  std::string driver;       // NVIDIA driver version (NVML), empty without one
  LibraryVersions libraries;
};

SystemReport describe_system();

// Why the CUDA runtime found no usable device, for messages. With no NVIDIA driver installed at all
// the runtime reports "CUDA driver version is insufficient", which sends users to upgrade a driver
// they do not have: when `driver_missing` is not empty (what failed to load), that is said instead.
std::string cuda_unavailable_reason(const std::string& error_name, const std::string& error_text,
                                    const std::string& driver_missing);

// Datasheet dense fp16 tensor TFLOPS and DRAM GB/s for GPUs we know by name; nullopt otherwise.
Peaks datasheet_peaks(const std::string& gpu_name);

}  // namespace attn
