// In-memory form of the attnscope.result.v1 records (docs/design.md "Result records"). Optional
// fields stay std::nullopt when not measured: a writer omits them, never writes a fake zero.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/problem.hpp"
#include "profiling/protocol.hpp"

namespace attn {

inline constexpr std::string_view kResultSchema = "attnscope.result.v1";

enum class Status { ok, skipped, mismatch, oom, fault, timeout, error };
std::string_view to_string(Status s);
std::optional<Status> parse_status(std::string_view s);

// Whether CUPTI metrics were collected, for a run and for each case. Only the codec spells it
// ("" for not_attempted, which the writer omits); everything else compares the enum.
enum class MetricsStatus {
  not_attempted,  // cpu backend, or the case was not ok
  ok,
  off,          // --metrics none
  unavailable,  // no CUPTI, no permission, under ncu/nsys: said once in the run record
  failed,       // this case only
};
std::string_view to_string(MetricsStatus s);
std::optional<MetricsStatus> parse_metrics_status(std::string_view s);
constexpr const char* kMetricsStatusAllowed = "ok, off, unavailable or failed";

struct TimingStats {
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0, std_ms = 0, q1_ms = 0, q3_ms = 0;
  double noise_pct = 0;  // relative standard error of the median [%]
  int samples = 0;
  bool converged = false;       // noise target reached before the time budget ran out
  int launches_per_sample = 1;  // > 1 when CUDA graphs batch launches
};

struct Correctness {
  double max_abs = 0;
  double rel_l2 = 0;  // ||out - ref|| / ||ref||
  double tol = 0;     // bound on rel_l2
  bool pass = false;
  std::string reference;                      // "cpu.reference", "cuda.reference+cpu.reference(rows)", ...
  std::string tol_rule;                       // "2x cudnn.sdpa (rel_l2 1.2e-4)" or "fp16 bound"
  std::int64_t nonfinite = 0;                 // outputs that are NaN/inf (unwritten poison included)
  std::optional<double> sampled_rows_rel_l2;  // against cpu.reference on sampled rows
  std::optional<std::int64_t> sampled_rows;
};

struct Clocks {
  std::optional<double> sm_mhz, mem_mhz, temp_c, power_w;
  // NVML clock-event reasons seen while timing (bitmask, idle and application-setting bits
  // dropped) and whether the SM clock fell below 90% of its first reading.
  std::optional<std::uint64_t> throttle_mask;
  std::optional<bool> clocks_dropped;
  std::optional<double> sm_mhz_min;  // lowest SM clock sampled [MHz]
};

// One kernel launch of a case, from CUPTI activity records (ours and library kernels alike).
struct LaunchStats {
  std::string name;  // demangled
  std::array<std::int64_t, 3> grid{}, block{};
  int regs = 0;                                 // registers per thread
  std::int64_t smem_static = 0;                 // [B] per block
  std::int64_t smem_dynamic = 0;                // [B] per block
  std::int64_t local_bytes = 0;                 // [B] local memory per thread (register spills, stack)
  std::optional<std::int64_t> smem_config;      // [B] shared memory carve-out it ran with
  std::optional<double> occupancy_theoretical;  // [%] of the SM's warp slots
};

// Hardware metrics of one kernel (or the aggregate of a case's kernels), from the CUPTI range
// profiler. Each field is absent when its metric was not collected or came back NaN.
struct KernelMetrics {
  std::string name;  // kernel name; empty for the aggregate
  // One member per line of profiling/metric_list.def (units and CUPTI names there).
#define ATTN_METRIC(member, ...) std::optional<double> member;
#include "profiling/metric_list.def"
#undef ATTN_METRIC
  std::map<std::string, double> extra;  // metrics added with --metrics, by catalogue name
};

struct CaseMetrics {
  KernelMetrics aggregate;             // counters summed, percentages weighted by each kernel's gpu time
  std::vector<KernelMetrics> kernels;  // one row per launch, in launch order
  int passes = 0;                      // replay passes per kernel
  std::string replay;                  // "case" (the case ran once per pass) or "kernel" (CUPTI's replay)
  double wall_s = 0;                   // [s] host time of the metrics pass
};

// Roofline placement of a case (profiling/roofline.hpp computes it).
struct Roofline {
  double algorithmic_intensity = 0;          // [FLOP/B] flops / min_bytes
  std::optional<double> achieved_intensity;  // [FLOP/B] flops / measured DRAM bytes
  double peak_tflops = 0, peak_gbps = 0;     // the ceilings used
  std::string peak_source;                   // "measured" | "datasheet"
  double ridge_intensity = 0;                // [FLOP/B] where the two ceilings meet
  double attainable_tflops = 0;              // at the achieved intensity, else the algorithmic
  std::optional<double> pct_of_roofline;     // [%] achieved TFLOPS / attainable
  std::string bound;                         // "memory" | "compute"
};

// Where a case ran (docs/design.md "Where a case ran"): the device as its worker's host numbers it,
// and the worker. The engine knows neither its slot nor the index the supervisor gave it, so the
// run session stamps these from the worker's device record when the result arrives.
struct CasePlace {
  std::string host;
  std::optional<int> device_index;  // as the worker's host numbers it (CUDA_VISIBLE_DEVICES applied)
  std::string device_uuid;          // "GPU-8c1f..." (empty on the cpu backend)
  std::string device_name;          // GPU name, or the CPU model
  std::string worker;               // the slot's label: "w1 (device 1)", "in-process"
  std::optional<int> worker_slot, worker_pid;
  std::optional<int> worker_start;  // 1 for the slot's first worker, 2 after one restart, ...
};

// Where a case's wall time went [s] (docs/design.md "Phases of a case"). Each is absent when the
// stage did not run; a problem's inputs and reference are paid by its first case on a worker.
struct CasePhases {
  std::optional<double> prepare_s;    // admission, kernel prepare, output/workspace allocation
  std::optional<double> inputs_s;     // generating and uploading Q, K, V
  std::optional<double> reference_s;  // reference output and cuDNN's error bar
  std::optional<double> check_s;      // the checked run, downloading and comparing its output
  std::optional<double> cooldown_s;   // the GPU idling before the warm-up (protocol.cooldown_ms)
  std::optional<double> warmup_s;     // back-to-back launches before sampling
  std::optional<double> timed_s;      // the samples, L2 flushes between them included
  std::optional<double> metrics_s;    // launch statistics and the CUPTI metrics pass
  std::optional<double> other_s;      // the rest of the case's wall time (derived quantities, freeing)
};

struct CaseResult {
  std::string case_id;
  std::string kernel;
  Knobs knobs;
  // The variant label (profiling/sweep/variant.hpp) when the knobs differ from the kernel's
  // defaults, e.g. "fa2.mma@br=64+bc=64"; empty at the defaults. Set by the engine, which has the
  // registry, so a report made where the kernel is not built still tells variants apart.
  std::string variant;
  // Where a kernel not built into attnscope came from: "plugin:<path>#<sha256>",
  // "source:<path>#<sha256>" or "python:<entry>[#<sha256>] (<versions>)"; empty for a built-in one.
  std::string kernel_origin;
  Problem problem;
  Status status = Status::error;
  std::string reason;
  std::optional<TimingStats> timing;
  double flops = 0;
  std::int64_t min_bytes = 0;
  std::optional<double> tflops, gbps, queries_per_s;
  // Dense-bucketed execution (knob `bucket`, kernels/api/bucketing.hpp): the fraction of the launched
  // (query, key) pairs that are padding. tflops counts the batch's real pairs only.
  std::optional<double> padding_waste;
  std::optional<Correctness> correctness;  // of O (the forward's output; in a bwd pass, the forward run)
  // Passes with a backward: dQ, dK and dV against the reference gradients, each under the same rule
  // as O ("grad_check.dq" ... in the record).
  std::optional<Correctness> grad_dq, grad_dk, grad_dv;
  std::optional<std::int64_t> device_bytes_peak;
  std::string nvtx_range;
  std::optional<Clocks> clocks;
  double wall_s = 0;                // [s] host time spent on the case: set-up, check, timing
  std::vector<LaunchStats> launch;  // every kernel one run of the case launches
  std::optional<CaseMetrics> metrics;
  MetricsStatus metrics_status = MetricsStatus::not_attempted;
  std::string metrics_reason;  // why metrics_status is not ok
  std::optional<Roofline> roofline;
  std::string ncu_command;  // profiles this one case with Nsight Compute, selected by NVTX range
  std::optional<CasePlace> place;
  std::optional<CasePhases> phases;
};

// Every phase with its JSON key ("inputs_s"), in the order a case runs them.
using PhaseMember = std::optional<double> CasePhases::*;
struct PhaseField {
  const char* key;
  PhaseMember member;
};
std::span<const PhaseField> case_phase_fields();

// The phases' sum [s] (0 when none were recorded).
double phases_sum(const CasePhases& p);
// Adds each phase of `from` that was recorded to `into`.
void add_phases(CasePhases& into, const CasePhases& from);

// The name of a case's kernel variant in every output (series, table rows, baselines, compare and
// crossover): `variant` when set, else the kernel id.
const std::string& variant_label(const CaseResult& c);

struct GpuInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t mem_bytes = 0;
  std::optional<double> sm_clock_mhz, mem_clock_mhz;
  std::optional<double> mem_bus_bits;
  std::string pci_bus_id;
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
};

struct Peaks {
  std::optional<double> tensor_tflops_measured, dram_gbps_measured;
  std::optional<double> tensor_tflops_datasheet, dram_gbps_datasheet;
  // Measured per dtype (dense cuBLAS GEMM); tensor_tflops_measured is the larger of the two.
  std::optional<double> tensor_tflops_fp16_measured, tensor_tflops_bf16_measured;
  std::optional<double> l2_gbps_measured;  // [GB/s] L2 read bandwidth (the roofline's L2 ceiling)
  std::string measured_at;                 // UTC ISO-8601 of the measurement (cached per GPU)
};

// A plug-in library whose kernels the run could use: where it was, and which bytes.
struct PluginRecord {
  std::string path;
  std::int64_t size = 0;
  std::string sha256;  // of the library, or of the kernel source's text
  std::string name;
  std::vector<std::string> kernels;
  std::string kind = "library";  // "library", "source" (--kernel-source) or "python"
  std::vector<std::string>
      compile;          // a source's compiler and shared options ("NVRTC 13.0", "-arch=sm_90a", ...)
  std::string watched;  // the file a hot-reloaded version was snapshot from (the GUI's --watch)
  int version = 0;      // which version of `watched` (1, 2, ...); 0 = not watched
  std::vector<std::string> versions;  // Python kernels: "Python 3.12.3", "torch 2.11.0+cu130", ...
};

// One device that took part in a run, as its worker described itself.
struct RunDevice {
  std::string host;
  int index = 0;       // as that host numbers it
  std::string uuid;    // empty on the cpu backend
  std::string name;    // GPU name, or the CPU model
  std::string worker;  // the first slot label that used it
  Peaks peaks;
};

// Where a run's time went (docs/design.md "Phases of a case"), written at the end of the run.
struct RunTotals {
  double wall_s = 0;          // [s] the sweep, from the first worker's start to the last result
  int cases = 0;              // results that carry phases
  double case_wall_s = 0;     // [s] sum of the cases' wall_s
  CasePhases phases;          // [s] each phase summed over the cases
  double worker_start_s = 0;  // [s] summed over worker starts: spawn to device record
  double handoff_s = 0;       // [s] summed over cases: hand-out to result, less the case's wall_s
  double idle_s = 0;          // [s] summed over slots: no case in flight and no worker starting
  int slots = 0;              // worker slots (1 in-process)
};

struct RunInfo {
  std::string schema{kResultSchema};
  std::string run_id;
  std::string started_at;  // UTC ISO-8601
  std::string version;
  std::string git_commit;
  std::string command_line;
  std::string host;
  std::string backend;  // "cpu" | "cuda"
  std::optional<GpuInfo> gpu;
  std::string driver, cuda_runtime, cudnn, cupti;
  std::string cpu_model;
  int cpu_threads = 0;
  std::string os;  // "Ubuntu 24.04.1 LTS (Linux 6.8.0-49-generic)"; empty when not recorded
  Protocol protocol;
  Peaks peaks;
  std::string baseline;  // kernel id speedups refer to, if any
  // CUPTI metrics of this run: the catalogue names collected and the replay passes per kernel;
  // or, when unavailable, why (said once per run, not per case).
  std::vector<std::string> metrics_names;
  std::optional<int> metrics_passes;
  MetricsStatus metrics_status = MetricsStatus::not_attempted;
  std::string metrics_reason;
  // Every device that took part (the first is the one `gpu` describes), and where the time went;
  // both completed when the run ends.
  std::vector<RunDevice> devices;
  std::optional<RunTotals> totals;
  std::vector<PluginRecord> plugins;  // --plugin / ATTNSCOPE_PLUGIN_PATH libraries and --kernel-source files
};

// Adds `from` to `into`: sums, and for the wall time and slot count either runs that followed each
// other (a resume: wall times add, slots are the larger) or ran side by side (shards being merged:
// the wall time is the longer, slots add).
void add_totals(RunTotals& into, const RunTotals& from, bool side_by_side);
// Appends `d` unless a device with the same host, index, UUID and name is there already.
void add_device(std::vector<RunDevice>& devices, const RunDevice& d);

// The current UTC time through strftime's `format` ("%Y-%m-%dT%H:%M:%SZ" for started_at).
std::string utc_now(const char* format);
// A new run's id: "<UTC %Y%m%d-%H%M%S>", then "-<name>" when the sweep has a name.
std::string new_run_id(const std::string& name);

}  // namespace attn
