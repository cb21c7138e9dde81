// dlopen binding of libcupti.so.13 (see cupti_api.hpp).
#include "profiling/cupti/cupti_api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <type_traits>

namespace attn::cupti {

std::string Api::describe(CUptiResult r) const {
  const char* name = nullptr;
  const char* message = nullptr;
  if (get_result_string) (void)get_result_string(r, &name);
  if (get_error_message) (void)get_error_message(r, &message);
  std::string s = name ? name : "CUPTI error " + std::to_string(static_cast<int>(r));
  if (message && *message) s += std::string(": ") + message;
  return s;
}

const Api* api(std::string* why_not) {
  static std::once_flag once;
  static Api* loaded = nullptr;
  static std::string reason;
  std::call_once(once, [] {
    void* lib = nullptr;
    std::string tried;
    // The loader path first (LD_LIBRARY_PATH, ld.so.cache), then the toolkit's usual places.
    for (const char* name : {"libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so.13",
                             "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"}) {
      lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
      const char* err = dlerror();
      if (tried.empty()) tried = err ? err : name;
    }
    if (!lib) {
      reason = "libcupti.so.13 could not be loaded (" + tried +
               "). Fix: install CUPTI from the CUDA 13 toolkit and add its lib64 to LD_LIBRARY_PATH";
      return;
    }
    // libcupti dlopens libnvperf_host.so by bare name, which an executable's RUNPATH does not
    // reach; loaded here first from libcupti's own directory, that dlopen finds it by soname.
    Dl_info info{};
    if (void* sym = dlsym(lib, "cuptiGetVersion"); sym && dladdr(sym, &info) && info.dli_fname) {
      std::string dir = info.dli_fname;
      dir = dir.substr(0, dir.find_last_of('/') + 1);
      if (!dlopen((dir + "libnvperf_host.so").c_str(), RTLD_NOW | RTLD_GLOBAL)) (void)dlerror();
    }
    auto* a = new Api;
    bool ok = true;
    auto bind = [&](auto& slot, const char* symbol) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(lib, symbol));
      if (!slot) {
        ok = false;
        if (reason.empty())
          reason = std::string("libcupti.so.13 lacks ") + symbol + " (CUPTI older than 13.0?)";
      }
    };
    bind(a->get_result_string, "cuptiGetResultString");
    bind(a->get_error_message, "cuptiGetErrorMessage");
    bind(a->profiler_initialize, "cuptiProfilerInitialize");
    bind(a->device_supported, "cuptiProfilerDeviceSupported");
    bind(a->counter_availability, "cuptiProfilerGetCounterAvailability");
    bind(a->chip_name, "cuptiDeviceGetChipName");
    bind(a->rp_enable, "cuptiRangeProfilerEnable");
    bind(a->rp_disable, "cuptiRangeProfilerDisable");
    bind(a->rp_counter_data_size, "cuptiRangeProfilerGetCounterDataSize");
    bind(a->rp_counter_data_init, "cuptiRangeProfilerCounterDataImageInitialize");
    bind(a->rp_set_config, "cuptiRangeProfilerSetConfig");
    bind(a->rp_start, "cuptiRangeProfilerStart");
    bind(a->rp_stop, "cuptiRangeProfilerStop");
    bind(a->rp_decode, "cuptiRangeProfilerDecodeData");
    bind(a->rp_counter_data_info, "cuptiRangeProfilerGetCounterDataInfo");
    bind(a->host_initialize, "cuptiProfilerHostInitialize");
    bind(a->host_deinitialize, "cuptiProfilerHostDeinitialize");
    bind(a->host_add_metrics, "cuptiProfilerHostConfigAddMetrics");
    bind(a->host_config_size, "cuptiProfilerHostGetConfigImageSize");
    bind(a->host_config_image, "cuptiProfilerHostGetConfigImage");
    bind(a->host_num_passes, "cuptiProfilerHostGetNumOfPasses");
    bind(a->host_evaluate, "cuptiProfilerHostEvaluateToGpuValues");
    bind(a->activity_register, "cuptiActivityRegisterCallbacks");
    bind(a->activity_enable, "cuptiActivityEnable");
    bind(a->activity_disable, "cuptiActivityDisable");
    bind(a->activity_flush, "cuptiActivityFlushAll");
    bind(a->activity_next, "cuptiActivityGetNextRecord");
    if (!ok) {
      delete a;
      dlclose(lib);
      return;
    }
    loaded = a;  // kept for the process's life: CUPTI must stay loaded while its callbacks are set
  });
  if (!loaded && why_not) *why_not = reason;
  return loaded;
}

}  // namespace attn::cupti
