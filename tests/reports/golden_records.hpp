// A fixed set of result records that between them set every field of the schema (the field
// catalogue's rows, launch statistics, per-kernel metrics and extras, throttle reasons,
// non-finite numbers), written to tests/golden/results.jsonl by the codec's golden test.
#pragma once
#include <limits>
#include <vector>

#include "profiling/result.hpp"
#include "tests/reports/sample_results.hpp"

namespace attn::test {

inline RunInfo golden_run() {
  RunInfo r = full_run();
  r.os = "Ubuntu 24.04.1 LTS (Linux 6.8.0-49-generic)";
  r.metrics_names = {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum"};
  r.metrics_passes = 3;
  r.metrics_status = MetricsStatus::ok;
  r.peaks.tensor_tflops_fp16_measured = 661.5;
  r.peaks.tensor_tflops_bf16_measured = 655.25;
  r.peaks.measured_at = "2025-01-01T00:00:00Z";
  return r;
}

inline KernelMetrics golden_kernel_metrics(const std::string& name, double scale) {
  KernelMetrics k;
  k.name = name;
  k.sm_throughput_pct = 71.25 * scale;
  k.dram_throughput_pct = 42.5 * scale;
  k.dram_bytes_read = 4.0e7 * scale;
  k.dram_bytes_write = 1.0e7 * scale;
  k.dram_bytes = 5.0e7 * scale;
  k.l2_throughput_pct = 33.0 * scale;
  k.tensor_pipe_pct = 61.75 * scale;
  k.achieved_occupancy_pct = 12.5 * scale;
  k.gpu_time_ns = 250000.0 * scale;
  k.tensor_flops = 1.2e12 * scale;
  k.tensor_pct_of_peak = 58.0 * scale;
  k.extra["lts__t_bytes.sum"] = 9.5e7 * scale;
  return k;
}

// A variant with metrics, a roofline, clock events and two launches.
inline CaseResult golden_profiled_case() {
  CaseResult c = full_case();
  c.variant = "fa2.mma@block_m=128";
  c.clocks->sm_mhz_min = 1755.0;
  c.clocks->clocks_dropped = true;
  c.clocks->throttle_mask = 0x4 | 0x40;
  LaunchStats a;
  a.name = "void fa2::fwd_kernel<128, 2>(Params)";
  a.grid = {16, 32, 2};
  a.block = {128, 1, 1};
  a.regs = 168;
  a.smem_static = 0;
  a.smem_dynamic = 98304;
  a.local_bytes = 16;
  a.smem_config = 233472;
  a.occupancy_theoretical = 12.5;
  LaunchStats b = a;
  b.name = "combine_kernel";
  b.smem_config.reset();
  b.occupancy_theoretical.reset();
  c.launch = {a, b};
  CaseMetrics m;
  m.kernels = {golden_kernel_metrics("void fa2::fwd_kernel<128, 2>(Params)", 1.0),
               golden_kernel_metrics("combine_kernel", 0.5)};
  m.aggregate = golden_kernel_metrics("", 0.75);
  m.aggregate.name.clear();
  m.passes = 3;
  m.wall_s = 0.125;
  c.metrics = m;
  c.metrics_status = MetricsStatus::ok;
  Roofline rl;
  rl.algorithmic_intensity = 24528.5;
  rl.achieved_intensity = 24691.25;
  rl.peak_tflops = 661.5;
  rl.peak_gbps = 3012.25;
  rl.peak_source = "measured";
  rl.ridge_intensity = 219.6;
  rl.attainable_tflops = 661.5;
  rl.pct_of_roofline = 0.375;
  rl.bound = "compute";
  c.roofline = rl;
  c.ncu_command =
      "ncu --nvtx --nvtx-include 'attnscope@attn/fa2.mma/2x16x1024x128/metrics/' attnscope run ...";
  return c;
}

// A mismatch with non-finite numbers and a per-case metrics failure.
inline CaseResult golden_mismatch_case() {
  CaseResult c = ok_case("naive.unfused", small_problem(128, false), 0.0625, 0.5);
  c.status = Status::mismatch;
  c.reason = "rel_l2 nan above tol 1e-05\n3 outputs are NaN";
  c.timing.reset();
  c.correctness->rel_l2 = std::numeric_limits<double>::quiet_NaN();
  c.correctness->max_abs = std::numeric_limits<double>::infinity();
  c.correctness->nonfinite = 3;
  c.tflops.reset();
  c.gbps.reset();
  c.metrics_status = MetricsStatus::failed;
  c.metrics_reason = "the range profiler stored 1 ranges for the 2 kernels the case launches";
  return c;
}

inline std::vector<CaseResult> golden_cases() {
  return {golden_profiled_case(), minimal_case(),
          skipped_case("cudnn.sdpa", small_problem(64, true), "needs head_dim in {64, 128}; got \"32\""),
          golden_mismatch_case()};
}

}  // namespace attn::test
