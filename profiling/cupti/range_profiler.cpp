// Range Profiler + Profiler Host calls in the order the CUDA 13 guide verified on the H100
// (shared/guides/cupti-metrics.md section 2); see range_profiler.hpp.
#include "profiling/cupti/range_profiler.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "profiling/cupti/cupti_api.hpp"
#include "profiling/engine/stage_trace.hpp"
#include "profiling/metrics.hpp"

namespace attn::cupti {

namespace {

const Api& need_api() {
  std::string why;
  const Api* a = api(&why);
  if (!a) throw MetricsError(why);
  return *a;
}

// A host object for `chip`, deinitialized on scope exit.
class HostObject {
 public:
  HostObject(const Api& a, const std::string& chip, const std::uint8_t* availability) : m_api(a) {
    CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability;
    const CUptiResult r = a.host_initialize(&p);
    if (r != CUPTI_SUCCESS)
      throw MetricsError("cuptiProfilerHostInitialize(chip " + chip + ") failed: " + a.describe(r));
    m_obj = p.pHostObject;
  }
  ~HostObject() {
    CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = m_obj;
    (void)m_api.host_deinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CUptiResult add(const std::vector<std::string>& names) {
    std::vector<const char*> c;
    for (const auto& n : names) c.push_back(n.c_str());
    CUpti_Profiler_Host_ConfigAddMetrics_Params p{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    p.pHostObject = m_obj;
    p.ppMetricNames = c.data();
    p.numMetrics = c.size();
    return m_api.host_add_metrics(&p);
  }

  std::vector<std::uint8_t> config_image() {
    CUpti_Profiler_Host_GetConfigImageSize_Params s{
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    s.pHostObject = m_obj;
    CUptiResult r = m_api.host_config_size(&s);
    if (r != CUPTI_SUCCESS)
      throw MetricsError("cuptiProfilerHostGetConfigImageSize failed: " + m_api.describe(r));
    std::vector<std::uint8_t> image(s.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params g{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    g.pHostObject = m_obj;
    g.configImageSize = image.size();
    g.pConfigImage = image.data();
    r = m_api.host_config_image(&g);
    if (r != CUPTI_SUCCESS)
      throw MetricsError("cuptiProfilerHostGetConfigImage failed: " + m_api.describe(r));
    return image;
  }

  CUpti_Profiler_Host_Object* get() const { return m_obj; }

 private:
  const Api& m_api;
  CUpti_Profiler_Host_Object* m_obj = nullptr;
};

int passes_of(const Api& a, std::vector<std::uint8_t>& image) {
  CUpti_Profiler_Host_GetNumOfPasses_Params p{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  p.configImageSize = image.size();
  p.pConfigImage = image.data();
  const CUptiResult r = a.host_num_passes(&p);
  if (r != CUPTI_SUCCESS) throw MetricsError("cuptiProfilerHostGetNumOfPasses failed: " + a.describe(r));
  return static_cast<int>(p.numOfPasses);
}

// The driver's cuCtxGetCurrent through the runtime, so attnscope never links libcuda (which a
// machine without a driver lacks).
CUcontext current_context() {
  using Fn = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess || !fn) {
    (void)cudaGetLastError();
    return nullptr;
  }
  CUcontext ctx = nullptr;
  if (reinterpret_cast<Fn>(fn)(&ctx) != CUDA_SUCCESS) return nullptr;
  return ctx;
}

}  // namespace

std::string first_unknown_metric(const std::string& chip, const std::vector<std::string>& names) {
  const Api& a = need_api();
  {
    HostObject all(a, chip, nullptr);
    if (all.add(names) == CUPTI_SUCCESS) return {};
  }
  for (const auto& n : names) {
    HostObject one(a, chip, nullptr);
    const CUptiResult r = one.add({n});
    if (r != CUPTI_SUCCESS)
      return "'" + n + "' is not a metric of " + chip + " (" + a.describe(r) +
             "); list them with `ncu --query-metrics --chip " + chip +
             "`, and give a rollup (.sum, .avg, ...)";
  }
  return "the metrics are valid one by one but CUPTI refused them together";
}

int count_passes(const std::string& chip, const std::vector<std::string>& names) {
  const Api& a = need_api();
  HostObject host(a, chip, nullptr);
  if (const CUptiResult r = host.add(names); r != CUPTI_SUCCESS)
    throw MetricsError("cuptiProfilerHostConfigAddMetrics failed: " + a.describe(r));
  std::vector<std::uint8_t> image = host.config_image();
  return passes_of(a, image);
}

std::unique_ptr<RangeProfiler> RangeProfiler::create(const std::vector<std::string>& names,
                                                     std::string& unavailable, int* code) {
  if (code) *code = 0;
  std::string why;
  const Api* a = api(&why);
  if (!a) {
    unavailable = why;
    return nullptr;
  }
  auto fail = [&](CUptiResult r, const char* call) {
    if (code) *code = static_cast<int>(r);
    unavailable = cupti_unavailable_reason(static_cast<int>(r), call, a->describe(r));
    return nullptr;
  };
  CUcontext ctx = current_context();
  if (!ctx) {
    unavailable = "no current CUDA context to profile (cuCtxGetCurrent failed)";
    return nullptr;
  }
  CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  if (CUptiResult r = a->profiler_initialize(&init); r != CUPTI_SUCCESS)
    return fail(r, "cuptiProfilerInitialize");

  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    unavailable = "no current CUDA device to profile (cudaGetDevice failed)";
    return nullptr;
  }
  CUpti_Profiler_DeviceSupported_Params sup{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  sup.cuDevice = device;
  sup.api = CUPTI_PROFILER_RANGE_PROFILING;
  if (CUptiResult r = a->device_supported(&sup); r != CUPTI_SUCCESS)
    return fail(r, "cuptiProfilerDeviceSupported");
  if (sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    std::string what;
    auto note = [&](CUpti_Profiler_Support_Level l, const char* name) {
      if (l != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) what += (what.empty() ? "" : ", ") + std::string(name);
    };
    note(sup.architecture, "architecture (compute capability below 7.5)");
    note(sup.sli, "SLI");
    note(sup.vGpu, "vGPU (profiling not enabled)");
    note(sup.confidentialCompute, "confidential compute");
    note(sup.cmp, "CMP board");
    note(sup.wsl, "WSL");
    unavailable =
        "the range profiler does not support this GPU configuration: " + (what.empty() ? "unknown" : what);
    return nullptr;
  }

  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = static_cast<std::size_t>(device);
  if (CUptiResult r = a->chip_name(&chip); r != CUPTI_SUCCESS) return fail(r, "cuptiDeviceGetChipName");

  CUpti_Profiler_GetCounterAvailability_Params avail{
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  avail.ctx = ctx;
  if (CUptiResult r = a->counter_availability(&avail); r != CUPTI_SUCCESS)
    return fail(r, "cuptiProfilerGetCounterAvailability");
  std::vector<std::uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if (CUptiResult r = a->counter_availability(&avail); r != CUPTI_SUCCESS)
    return fail(r, "cuptiProfilerGetCounterAvailability");

  std::unique_ptr<RangeProfiler> p(new RangeProfiler);
  p->m_chip = chip.pChipName;
  p->m_names = names;
  p->m_ctx = ctx;
  if (const std::string bad = first_unknown_metric(p->m_chip, names); !bad.empty()) throw MetricsError(bad);
  {
    HostObject host(*a, p->m_chip, availability.data());
    if (const CUptiResult r = host.add(names); r != CUPTI_SUCCESS)
      throw MetricsError("cuptiProfilerHostConfigAddMetrics failed: " + a->describe(r));
    p->m_config = host.config_image();
  }
  p->m_passes = passes_of(*a, p->m_config);

  // Trial enable: where counters are admin-only this is the call that says so.
  CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  en.ctx = ctx;
  if (CUptiResult r = a->rp_enable(&en); r != CUPTI_SUCCESS) return fail(r, "cuptiRangeProfilerEnable");
  CUpti_RangeProfiler_Disable_Params dis{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
  dis.pRangeProfilerObject = en.pRangeProfilerObject;
  if (CUptiResult r = a->rp_disable(&dis); r != CUPTI_SUCCESS) return fail(r, "cuptiRangeProfilerDisable");
  return p;
}

RangeProfiler::~RangeProfiler() { end_session(); }

void RangeProfiler::end_session() {
  if (!m_object) return;
  const StageTrace trace("metrics.disable");
  if (const Api* a = api()) {
    CUpti_RangeProfiler_Disable_Params d{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    d.pRangeProfilerObject = static_cast<CUpti_RangeProfiler_Object*>(m_object);
    (void)a->rp_disable(&d);
  }
  m_object = nullptr;
  m_image.clear();
  m_capacity = m_used = 0;
}

void RangeProfiler::begin_session(bool kernel_replay, std::size_t capacity) {
  const Api& a = need_api();
  auto check = [&](CUptiResult r, const char* call) {
    if (r != CUPTI_SUCCESS) throw MetricsError(std::string(call) + " failed: " + a.describe(r));
  };
  std::vector<const char*> names;
  for (const auto& n : m_names) names.push_back(n.c_str());
  const StageTrace trace("metrics.begin_session");
  CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  en.ctx = static_cast<CUcontext>(m_ctx);
  check(a.rp_enable(&en), "cuptiRangeProfilerEnable");
  m_object = en.pRangeProfilerObject;
  m_kernel_replay = kernel_replay;

  CUpti_RangeProfiler_GetCounterDataSize_Params sz{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  sz.pRangeProfilerObject = en.pRangeProfilerObject;
  sz.pMetricNames = names.data();
  sz.numMetrics = names.size();
  sz.maxNumOfRanges = capacity;
  sz.maxNumRangeTreeNodes = static_cast<std::uint32_t>(capacity);
  check(a.rp_counter_data_size(&sz), "cuptiRangeProfilerGetCounterDataSize");
  m_image.assign(sz.counterDataSize, 0);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params ini{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  ini.pRangeProfilerObject = en.pRangeProfilerObject;
  ini.counterDataSize = m_image.size();
  ini.pCounterData = m_image.data();
  check(a.rp_counter_data_init(&ini), "cuptiRangeProfilerCounterDataImageInitialize");

  CUpti_RangeProfiler_SetConfig_Params cfg{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  cfg.pRangeProfilerObject = en.pRangeProfilerObject;
  cfg.configSize = m_config.size();
  cfg.pConfig = m_config.data();
  cfg.counterDataImageSize = m_image.size();
  cfg.pCounterDataImage = m_image.data();
  cfg.range = CUPTI_AutoRange;
  cfg.replayMode = kernel_replay ? CUPTI_KernelReplay : CUPTI_UserReplay;
  cfg.maxRangesPerPass = capacity;
  cfg.numNestingLevels = 1;
  cfg.minNestingLevel = 1;
  cfg.passIndex = 0;
  cfg.targetNestingLevel = 1;
  check(a.rp_set_config(&cfg), "cuptiRangeProfilerSetConfig");
  m_capacity = capacity;
  m_used = 0;
}

std::vector<std::map<std::string, double>> RangeProfiler::collect(const std::function<void()>& launch,
                                                                  std::size_t max_kernels, bool kernel_replay,
                                                                  const std::function<void()>& before_pass,
                                                                  int* passes_run) {
  const Api& a = need_api();
  auto check = [&](CUptiResult r, const char* call) {
    if (r != CUPTI_SUCCESS) throw MetricsError(std::string(call) + " failed: " + a.describe(r));
  };
  std::vector<const char*> names;
  for (const auto& n : m_names) names.push_back(n.c_str());

  // One SetConfig per Enable (a second one on a used object gave garbage on the H100), so a new
  // replay mode, or a counter image without room for this case's ranges, starts a new session.
  if (m_object && (m_kernel_replay != kernel_replay || m_used + max_kernels > m_capacity)) end_session();
  // Any failure (in set-up too) leaves the session in an unknown state: the next case starts anew.
  struct EndOnThrow {
    RangeProfiler& p;
    bool armed = true;
    ~EndOnThrow() {
      if (armed) p.end_session();
    }
  } end_on_throw{*this};
  if (!m_object) begin_session(kernel_replay, std::max(max_kernels, m_session_ranges));
  auto* object = static_cast<CUpti_RangeProfiler_Object*>(m_object);

  // User replay: one trip through the loop per pass, each running the whole case again. Kernel
  // replay: CUPTI replays each kernel itself, so one trip.
  std::optional<StageTrace> trace;
  bool all_submitted = false;
  int trip = 0;
  for (; !all_submitted; ++trip) {
    if (trip >= 4 * m_passes + 4)
      throw MetricsError("the range profiler never reported all passes submitted");
    if (before_pass) {
      trace.emplace("metrics.reset");
      before_pass();
    }
    trace.emplace("metrics.pass");
    CUpti_RangeProfiler_Start_Params st{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    st.pRangeProfilerObject = object;
    check(a.rp_start(&st), "cuptiRangeProfilerStart");
    launch();
    CUpti_RangeProfiler_Stop_Params sp{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    sp.pRangeProfilerObject = object;
    check(a.rp_stop(&sp), "cuptiRangeProfilerStop");
    all_submitted = sp.isAllPassSubmitted != 0;
  }
  if (passes_run) *passes_run = trip;
  trace.emplace("metrics.decode");
  CUpti_RangeProfiler_DecodeData_Params dec{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  dec.pRangeProfilerObject = object;
  check(a.rp_decode(&dec), "cuptiRangeProfilerDecodeData");

  CUpti_RangeProfiler_GetCounterDataInfo_Params info{
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = m_image.data();
  info.counterDataImageSize = m_image.size();
  check(a.rp_counter_data_info(&info), "cuptiRangeProfilerGetCounterDataInfo");
  // The session's image keeps every case's ranges: this case's are the ones after the last case's.
  if (info.numTotalRanges < m_used)
    throw MetricsError("the range profiler's image holds fewer ranges than before this case");
  const std::size_t first = m_used;
  m_used = info.numTotalRanges;

  trace.emplace("metrics.evaluate");
  HostObject host(a, m_chip, nullptr);  // any host object of the chip can evaluate
  std::vector<std::map<std::string, double>> out;
  std::vector<double> values(names.size());
  for (std::size_t i = first; i < info.numTotalRanges; ++i) {
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev{
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    ev.pHostObject = host.get();
    ev.pCounterDataImage = m_image.data();
    ev.counterDataImageSize = m_image.size();
    ev.rangeIndex = i;
    ev.ppMetricNames = names.data();
    ev.numMetrics = names.size();
    ev.pMetricValues = values.data();
    check(a.host_evaluate(&ev), "cuptiProfilerHostEvaluateToGpuValues");
    std::map<std::string, double> row;
    for (std::size_t m = 0; m < names.size(); ++m) row[m_names[m]] = values[m];
    out.push_back(std::move(row));
  }
  end_on_throw.armed = false;
  return out;
}

}  // namespace attn::cupti
