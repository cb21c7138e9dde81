// In-memory form of the attnscope.result.v1 records (docs/design.md "Result records"). Optional
// fields stay std::nullopt when not measured: a writer omits them, never writes a fake zero.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
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
  std::optional<double> sm_throughput_pct, dram_throughput_pct, l2_throughput_pct, tensor_pipe_pct,
      achieved_occupancy_pct;                                           // [%]
  std::optional<double> dram_bytes, dram_bytes_read, dram_bytes_write;  // [B]
  std::optional<double> tensor_flops;        // FLOPs on the tensor cores (an FMA counts 2)
  std::optional<double> tensor_pct_of_peak;  // [%] of the dense (sparsity off) tensor peak
  std::optional<double> gpu_time_ns;         // [ns] gpu__time_duration.sum
  std::map<std::string, double> extra;       // metrics added with --metrics, by catalogue name
};

struct CaseMetrics {
  KernelMetrics aggregate;             // counters summed, percentages weighted by each kernel's gpu time
  std::vector<KernelMetrics> kernels;  // one row per launch, in launch order
  int passes = 0;                      // replay passes per kernel
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

struct CaseResult {
  std::string case_id;
  std::string kernel;
  Knobs knobs;
  // The variant label (profiling/sweep/variant.hpp) when the knobs differ from the kernel's
  // defaults, e.g. "fa2.mma@br=64+bc=64"; empty at the defaults. Set by the engine, which has the
  // registry, so a report made where the kernel is not built still tells variants apart.
  std::string variant;
  Problem problem;
  Status status = Status::error;
  std::string reason;
  std::optional<TimingStats> timing;
  double flops = 0;
  std::int64_t min_bytes = 0;
  std::optional<double> tflops, gbps, queries_per_s;
  std::optional<Correctness> correctness;
  std::optional<std::int64_t> device_bytes_peak;
  std::string nvtx_range;
  std::optional<Clocks> clocks;
  double wall_s = 0;                // [s] host time spent on the case: set-up, check, timing
  std::vector<LaunchStats> launch;  // every kernel one run of the case launches
  std::optional<CaseMetrics> metrics;
  // "" = not attempted (cpu backend, case not ok); "ok"; "off" (--metrics none); "unavailable"
  // (no CUPTI, no permission, under ncu/nsys); "failed" (this case only). Reason says why.
  std::string metrics_status, metrics_reason;
  std::optional<Roofline> roofline;
  std::string ncu_command;  // profiles this one case with Nsight Compute, selected by NVTX range
};

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
};

struct Peaks {
  std::optional<double> tensor_tflops_measured, dram_gbps_measured;
  std::optional<double> tensor_tflops_datasheet, dram_gbps_datasheet;
  // Measured per dtype (dense cuBLAS GEMM); tensor_tflops_measured is the larger of the two.
  std::optional<double> tensor_tflops_fp16_measured, tensor_tflops_bf16_measured;
  std::string measured_at;  // UTC ISO-8601 of the measurement (cached per GPU)
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
  std::string metrics_status, metrics_reason;
};

// The current UTC time through strftime's `format` ("%Y-%m-%dT%H:%M:%SZ" for started_at).
std::string utc_now(const char* format);
// A new run's id: "<UTC %Y%m%d-%H%M%S>", then "-<name>" when the sweep has a name.
std::string new_run_id(const std::string& name);

}  // namespace attn
