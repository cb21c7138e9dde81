// The CUPTI metrics model, independent of CUPTI itself: the default metric set and how each
// catalogue name maps onto a record field, the --metrics request syntax, aggregation across the
// kernels of a case, the `unavailable` reasons with their fixes, and the ncu command of a case.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "profiling/field_catalogue.hpp"
#include "profiling/protocol.hpp"
#include "profiling/result.hpp"

namespace attn {

// The NVTX domain of every attnscope range, and the sub-range (inside the case's range) around
// the launch that the metrics pass measures; the recorded ncu command selects exactly that one.
inline constexpr std::string_view kNvtxDomain = "attnscope";
inline constexpr std::string_view kNvtxMetricsRange = "metrics";

// Catalogue names (GH100, as ncu names them) behind the record fields.
namespace metric {
inline constexpr const char* kSmThroughput = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
// What Nsight Compute's SpeedOfLight section shows as "DRAM Throughput" on compute capability 9.0.
inline constexpr const char* kDramThroughput = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDramRead = "dram__bytes_read.sum";
inline constexpr const char* kDramWrite = "dram__bytes_write.sum";
inline constexpr const char* kL2Throughput = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
// Counts wgmma (HGMMA) as well as mma.sync: equal to ..._op_gmma on a cuBLAS GEMM on the H100.
inline constexpr const char* kTensorPipe =
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kWarpsActive = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kGpuTime = "gpu__time_duration.sum";
}  // namespace metric

// Tensor FLOP counters (an FMA counts 2), summed into tensor_flops.
const std::vector<std::string>& tensor_flop_metrics();
// Percent of the dense tensor peak per instruction path. The `_sparsity_off` forms carry the
// dense peak (4096 FLOP/SM/cycle on GH100); the aggregate src_* forms carry the sparse one, so
// they would read half. Summed into tensor_pct_of_peak.
const std::vector<std::string>& tensor_peak_pct_metrics();
// Every metric of the default set, in collection order: the CUPTI names of the field catalogue's
// metrics.* rows (profiling/field_catalogue.cpp), in row order, each once.
const std::vector<std::string>& default_metric_names();

// A parsed --metrics value (protocol.metrics).
struct MetricsRequest {
  bool enabled = true;
  std::vector<std::string> names;  // everything to collect, default set first, no duplicates
  std::vector<std::string> extra;  // names beyond the default set (reported under `extra`)
};

// "default" (or empty), "none", "+a,b" (the default set plus a, b) or "a,b" (only a, b).
// Returns false with `problem` naming the bad part when the text does not parse or a name is not
// of the catalogue's form; whether the name exists on the GPU is checked by the CUPTI backend.
bool parse_metrics_request(std::string_view text, MetricsRequest& out, std::string& problem);
constexpr const char* kMetricsRequestAllowed =
    "default, none, +NAME,... (the default set plus these) or NAME,... (only these); NAME as in "
    "`ncu --query-metrics`, with a rollup: e.g. lts__t_bytes.sum or "
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";

// Empty when every name is in the catalogue of GPU 0's chip, or when there is no GPU or CUPTI to
// ask (a CPU machine: the worker's engine checks again before the first case); otherwise which
// name is unknown and how to list the valid ones. Lets `run` refuse a bad --metrics up front.
std::string metric_catalogue_problem(const std::vector<std::string>& names);

// Empty when `name` has the catalogue form base.rollup[.submetric] (or base.ratio/.pct/.max_rate
// for ratio metrics); otherwise what is wrong with it.
std::string metric_name_problem(std::string_view name);

// Record fields of one kernel from its raw values (NaN and missing values stay absent); names in
// `extra` are copied to KernelMetrics::extra.
KernelMetrics kernel_metrics_from(const std::string& kernel_name, const std::map<std::string, double>& raw,
                                  const std::vector<std::string>& extra);

// How an extra (--metrics) metric combines across the kernels of a case, from its name's rollup;
// the catalogue's rows carry their own (FieldDesc::rollup).
Rollup rollup_of(std::string_view name);

// Aggregate of a case's kernels: counters (bytes, FLOPs, time) summed; percentages and averages
// weighted by each kernel's gpu_time_ns (plain mean when a time is missing); a field is present
// only when every kernel has it.
KernelMetrics aggregate_metrics(const std::vector<KernelMetrics>& kernels);

// Why metrics are unavailable, with the fix, for a CUPTI result code returned by `call`.
std::string cupti_unavailable_reason(int code, std::string_view call, std::string_view cupti_message);

// Non-empty when this process runs under a CUDA tool that owns the profiler (Nsight Compute,
// Nsight Systems, another CUPTI client injected through CUDA_INJECTION64_PATH): which one.
std::string injected_profiler(const char* injection_path_env, const char* nsys_env);
std::string injected_profiler();  // from this process's environment

// `name` with every ncu NVTX-filter quantifier (@ , [ ] / * + and \) escaped by a backslash, so
// that ncu matches it literally as one range name.
std::string escape_nvtx_filter(std::string_view name);

// The ncu command that profiles exactly this case's metrics launch: NVTX filter on the case's
// range and its "metrics" sub-range, clocks and caches left alone (as the CUPTI pass does), the
// same metric names, and an attnscope run of this one case (same problem, l2 mode and seed).
std::string ncu_command_for(const std::string& attnscope_exe, const std::string& kernel, const Problem& p,
                            const Protocol& protocol, const std::vector<std::string>& metric_names,
                            const std::string& nvtx_range);

}  // namespace attn
