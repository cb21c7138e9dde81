// Result records shared by the reports tests: one fully populated run and case, and small
// cases of each kind, with every value spelled out so golden files can be checked by hand.
#pragma once
#include <cstdint>
#include <string>

#include "profiling/result.hpp"

namespace attn::test {

inline RunInfo full_run() {
  RunInfo r;
  r.run_id = "20250102-030405-h100";
  r.started_at = "2025-01-02T03:04:05Z";
  r.version = "0.1.0";
  r.git_commit = "a626d892aea4";
  r.command_line = "attnscope run --preset assets/presets/smoke.toml --out runs/x";
  r.host = "gpu-node-7";
  r.backend = "cuda";
  GpuInfo g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.cc_major = 9;
  g.cc_minor = 0;
  g.sms = 132;
  g.l2_bytes = 52428800;
  g.mem_bytes = 85520809984;
  g.sm_clock_mhz = 1980.0;
  g.mem_clock_mhz = 2619.0;
  g.mem_bus_bits = 5120.0;
  g.pci_bus_id = "00000000:19:00.0";
  r.gpu = g;
  r.driver = "580.65.06";
  r.cuda_runtime = "13.0";
  r.cudnn = "9.12.0";
  r.cupti = "13.0";
  r.cpu_model = "Intel(R) Xeon(R) Platinum 8480+";
  r.cpu_threads = 16;
  r.protocol.warmup_ms = 25.5;
  r.protocol.min_samples = 12;
  r.protocol.max_samples = 1500;
  r.protocol.max_time_s = 0.75;
  r.protocol.noise_pct = 0.5;
  r.protocol.l2 = L2Mode::warm;
  r.protocol.graphs = true;
  r.protocol.graph_batch = 16;
  r.protocol.seed = 18446744073709551615ull;  // the largest seed must survive JSON
  r.protocol.check = false;
  r.peaks.tensor_tflops_measured = 661.5;
  r.peaks.dram_gbps_measured = 3012.25;
  r.peaks.tensor_tflops_datasheet = 989.4;
  r.peaks.dram_gbps_datasheet = 3352.0;
  r.baseline = "cudnn.sdpa";
  return r;
}

inline Problem gqa_problem() {
  Problem p;
  p.batch = 2;
  p.heads_q = 16;
  p.heads_kv = 4;
  p.seq_q = 1024;
  p.seq_kv = 2048;
  p.head_dim = 128;
  p.head_dim_v = 64;
  p.dtype = DType::bf16;
  p.causal = true;
  p.window = {256, 0};
  return p;
}

inline CaseResult full_case() {
  CaseResult c;
  c.case_id = "c0ffee1234567890";
  c.kernel = "fa2.mma";
  c.knobs = {{"block_m", 128}, {"stages", 2}};
  c.problem = gqa_problem();
  c.status = Status::ok;
  c.reason = "";
  TimingStats t;
  t.median_ms = 0.5;
  t.min_ms = 0.48;
  t.max_ms = 0.61;
  t.mean_ms = 0.51;
  t.std_ms = 0.02;
  t.q1_ms = 0.49;
  t.q3_ms = 0.52;
  t.noise_pct = 0.3;
  t.samples = 200;
  t.converged = true;
  t.launches_per_sample = 4;
  c.timing = t;
  c.flops = 1234567890123.0;
  c.min_bytes = 50331648;
  c.tflops = 2.469135780246;
  c.gbps = 100.663296;
  c.queries_per_s = 65536000.0;
  Correctness k;
  k.max_abs = 0.0078125;
  k.rel_l2 = 0.000123;
  k.tol = 0.002;
  k.pass = true;
  k.reference = "cuda.reference+cpu.reference(rows)";
  k.tol_rule = "2x cudnn.sdpa (rel_l2 1.2e-4)";
  k.nonfinite = 3;
  k.sampled_rows_rel_l2 = 0.000119;
  k.sampled_rows = 64;
  c.correctness = k;
  c.device_bytes_peak = 75497472;
  c.nvtx_range = "attn/fa2.mma/2x16x1024x128";
  c.clocks = Clocks{1980.0, 2619.0, 54.0, 412.5};
  c.wall_s = 1.25;
  return c;
}

// Only the required fields: everything optional stays nullopt.
inline CaseResult minimal_case() {
  CaseResult c;
  c.case_id = "0000000000000001";
  c.kernel = "cudnn.sdpa";
  c.problem.batch = 1;
  c.problem.heads_q = 2;
  c.problem.heads_kv = 2;
  c.problem.seq_q = 64;
  c.problem.seq_kv = 64;
  c.problem.head_dim = 32;
  c.problem.head_dim_v = 32;
  c.problem.dtype = DType::fp32;
  c.status = Status::skipped;
  c.reason = "backend cuda: not built";
  return c;
}

// A small fp32 problem as the CPU backend runs it.
inline Problem small_problem(std::int64_t seq, bool causal) {
  Problem p;
  p.batch = 1;
  p.heads_q = 2;
  p.heads_kv = 2;
  p.seq_q = seq;
  p.seq_kv = seq;
  p.head_dim = 32;
  p.head_dim_v = 32;
  p.dtype = DType::fp32;
  p.causal = causal;
  return p;
}

// An ok case with its timing and a passed check; flops/bytes counted from the problem.
inline CaseResult ok_case(const std::string& kernel, const Problem& p, double median_ms, double rel_l2) {
  CaseResult c;
  c.case_id = kernel + "/" + p.shape_label() + "/" + p.mask_label();
  c.kernel = kernel;
  c.problem = p;
  c.status = Status::ok;
  TimingStats t;
  t.median_ms = median_ms;
  t.min_ms = median_ms * 0.9;
  t.max_ms = median_ms * 1.5;
  t.mean_ms = median_ms * 1.1;
  t.std_ms = median_ms * 0.05;
  t.q1_ms = median_ms * 0.95;
  t.q3_ms = median_ms * 1.05;
  t.noise_pct = 0.8;
  t.samples = 10;
  t.converged = true;
  c.timing = t;
  c.flops = p.flops();
  c.min_bytes = p.min_bytes(false);
  c.tflops = c.flops / (median_ms * 1e-3) / 1e12;
  c.gbps = static_cast<double>(c.min_bytes) / (median_ms * 1e-3) / 1e9;
  Correctness k;
  k.rel_l2 = rel_l2;
  k.max_abs = rel_l2 * 2;
  k.tol = 1e-5;
  k.pass = rel_l2 <= k.tol;
  k.reference = "cpu.reference";
  k.tol_rule = "fp32 bound";
  c.correctness = k;
  c.wall_s = 0.25;
  return c;
}

inline CaseResult skipped_case(const std::string& kernel, const Problem& p, const std::string& reason) {
  CaseResult c;
  c.case_id = kernel + "/" + p.shape_label() + "/" + p.mask_label();
  c.kernel = kernel;
  c.problem = p;
  c.status = Status::skipped;
  c.reason = reason;
  c.flops = p.flops();
  c.min_bytes = p.min_bytes(false);
  c.wall_s = 0.001;
  return c;
}

}  // namespace attn::test
