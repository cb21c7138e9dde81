// CUDA device queries used by the CUDA engine and `attnscope devices`.
#pragma once
#include <string>

#include "profiling/result.hpp"

namespace attn {

bool probe_cuda_device(std::string* why_not);
GpuInfo query_device(int index);
// Fills run.backend, gpu, driver, cuda_runtime, cudnn, cupti and datasheet peaks.
void describe_cuda(RunInfo& run, const GpuInfo& gpu);

}  // namespace attn
