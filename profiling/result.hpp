// In-memory form of the attnscope.result.v1 records (DESIGN.md "Result records"). Optional
// fields stay std::nullopt when not measured: a writer omits them, never writes a fake zero.
#pragma once
#include <cstdint>
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
  bool converged = false;      // noise target reached before the time budget ran out
  int launches_per_sample = 1; // > 1 when CUDA graphs batch launches
};

struct Correctness {
  double max_abs = 0;
  double rel_l2 = 0;  // ||out - ref|| / ||ref||
  double tol = 0;     // bound on rel_l2
  bool pass = false;
  std::string reference;  // "cpu.reference", "cuda.reference+cpu.reference(rows)", ...
  std::string tol_rule;   // "2x cudnn.sdpa (rel_l2 1.2e-4)" or "fp16 bound"
  std::int64_t nonfinite = 0;  // outputs that are NaN/inf (unwritten poison included)
  std::optional<double> sampled_rows_rel_l2;  // against cpu.reference on sampled rows
  std::optional<std::int64_t> sampled_rows;
};

struct Clocks {
  std::optional<double> sm_mhz, mem_mhz, temp_c, power_w;
};

struct CaseResult {
  std::string case_id;
  std::string kernel;
  Knobs knobs;
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
  double wall_s = 0;  // [s] host time spent on the case: set-up, check, timing
};

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
  Protocol protocol;
  Peaks peaks;
  std::string baseline;  // kernel id speedups refer to, if any
};

}  // namespace attn
