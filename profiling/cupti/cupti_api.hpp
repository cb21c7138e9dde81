// libcupti.so.13, loaded at run time: attnscope must start on machines without CUPTI (or without
// a driver), where metrics and launch statistics are then `unavailable` with the reason. Only the
// entry points attnscope calls are bound; their types come from the CUPTI 13 headers.
#pragma once
#include <cupti_activity.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <string>

namespace attn::cupti {

struct Api {
  decltype(&::cuptiGetResultString) get_result_string = nullptr;
  decltype(&::cuptiGetErrorMessage) get_error_message = nullptr;
  // Profiler (target side)
  decltype(&::cuptiProfilerInitialize) profiler_initialize = nullptr;
  decltype(&::cuptiProfilerDeviceSupported) device_supported = nullptr;
  decltype(&::cuptiProfilerGetCounterAvailability) counter_availability = nullptr;
  decltype(&::cuptiDeviceGetChipName) chip_name = nullptr;
  // Range profiler
  decltype(&::cuptiRangeProfilerEnable) rp_enable = nullptr;
  decltype(&::cuptiRangeProfilerDisable) rp_disable = nullptr;
  decltype(&::cuptiRangeProfilerGetCounterDataSize) rp_counter_data_size = nullptr;
  decltype(&::cuptiRangeProfilerCounterDataImageInitialize) rp_counter_data_init = nullptr;
  decltype(&::cuptiRangeProfilerSetConfig) rp_set_config = nullptr;
  decltype(&::cuptiRangeProfilerStart) rp_start = nullptr;
  decltype(&::cuptiRangeProfilerStop) rp_stop = nullptr;
  decltype(&::cuptiRangeProfilerDecodeData) rp_decode = nullptr;
  decltype(&::cuptiRangeProfilerGetCounterDataInfo) rp_counter_data_info = nullptr;
  // Profiler host
  decltype(&::cuptiProfilerHostInitialize) host_initialize = nullptr;
  decltype(&::cuptiProfilerHostDeinitialize) host_deinitialize = nullptr;
  decltype(&::cuptiProfilerHostConfigAddMetrics) host_add_metrics = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImageSize) host_config_size = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImage) host_config_image = nullptr;
  decltype(&::cuptiProfilerHostGetNumOfPasses) host_num_passes = nullptr;
  decltype(&::cuptiProfilerHostEvaluateToGpuValues) host_evaluate = nullptr;
  // Activity
  decltype(&::cuptiActivityRegisterCallbacks) activity_register = nullptr;
  decltype(&::cuptiActivityEnable) activity_enable = nullptr;
  decltype(&::cuptiActivityDisable) activity_disable = nullptr;
  decltype(&::cuptiActivityFlushAll) activity_flush = nullptr;
  decltype(&::cuptiActivityGetNextRecord) activity_next = nullptr;

  // "CUPTI_ERROR_X: message" for a result code.
  std::string describe(CUptiResult r) const;
};

// The loaded library, or null with `why_not` (which file was tried and what dlopen said). Loaded
// once per process; later calls return the same answer.
const Api* api(std::string* why_not = nullptr);

}  // namespace attn::cupti
