// Round trips of run and case records through JSON: every field, absent optionals, non-finite
// doubles, and the errors a bad record gives.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reports/result_json.hpp"
#include "tests/reports/sample_results.hpp"

namespace attn {
namespace {

using nlohmann::json;

// Through text, as the JSONL file stores it.
json reparse(const json& j) { return json::parse(j.dump()); }

TEST(ResultJson, RunRoundTripKeepsEveryField) {
  const RunInfo in = test::full_run();
  const json j = reparse(to_json(in));
  EXPECT_EQ(j.at("schema"), "attnscope.result.v1");
  EXPECT_EQ(j.at("record"), "run");
  EXPECT_EQ(j.at("gpu").at("cc"), "9.0");
  EXPECT_EQ(j.at("gpu").at("clocks").at("sm_mhz"), 1980.0);
  EXPECT_EQ(j.at("protocol").at("l2"), "warm");
  EXPECT_EQ(j.at("protocol").at("seed").get<std::uint64_t>(), 18446744073709551615ull);

  const RunInfo out = run_info_from_json(j);
  EXPECT_EQ(out.schema, "attnscope.result.v1");
  EXPECT_EQ(out.run_id, "20250102-030405-h100");
  EXPECT_EQ(out.started_at, "2025-01-02T03:04:05Z");
  EXPECT_EQ(out.version, "0.1.0");
  EXPECT_EQ(out.git_commit, "a626d892aea4");
  EXPECT_EQ(out.command_line, in.command_line);
  EXPECT_EQ(out.host, "gpu-node-7");
  EXPECT_EQ(out.backend, "cuda");
  ASSERT_TRUE(out.gpu.has_value());
  EXPECT_EQ(out.gpu->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(out.gpu->cc_major, 9);
  EXPECT_EQ(out.gpu->cc_minor, 0);
  EXPECT_EQ(out.gpu->sms, 132);
  EXPECT_EQ(out.gpu->l2_bytes, 52428800);
  EXPECT_EQ(out.gpu->mem_bytes, 85520809984);
  EXPECT_EQ(out.gpu->sm_clock_mhz, 1980.0);
  EXPECT_EQ(out.gpu->mem_clock_mhz, 2619.0);
  EXPECT_EQ(out.gpu->mem_bus_bits, 5120.0);
  EXPECT_EQ(out.gpu->pci_bus_id, "00000000:19:00.0");
  EXPECT_EQ(out.driver, "580.65.06");
  EXPECT_EQ(out.cuda_runtime, "13.0");
  EXPECT_EQ(out.cudnn, "9.12.0");
  EXPECT_EQ(out.cupti, "13.0");
  EXPECT_EQ(out.cpu_model, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(out.cpu_threads, 16);
  EXPECT_EQ(out.protocol.warmup_ms, 25.5);
  EXPECT_EQ(out.protocol.min_samples, 12);
  EXPECT_EQ(out.protocol.max_samples, 1500);
  EXPECT_EQ(out.protocol.max_time_s, 0.75);
  EXPECT_EQ(out.protocol.noise_pct, 0.5);
  EXPECT_EQ(out.protocol.l2, L2Mode::warm);
  EXPECT_TRUE(out.protocol.graphs);
  EXPECT_EQ(out.protocol.graph_batch, 16);
  EXPECT_EQ(out.protocol.seed, 18446744073709551615ull);
  EXPECT_FALSE(out.protocol.check);
  EXPECT_EQ(out.peaks.tensor_tflops_measured, 661.5);
  EXPECT_EQ(out.peaks.dram_gbps_measured, 3012.25);
  EXPECT_EQ(out.peaks.tensor_tflops_datasheet, 989.4);
  EXPECT_EQ(out.peaks.dram_gbps_datasheet, 3352.0);
  EXPECT_EQ(out.baseline, "cudnn.sdpa");
  // Writing the read-back record gives the same JSON: nothing was lost or invented.
  EXPECT_EQ(to_json(out), j);
}

// The cool-down is written only when there is one, so records without it (and older ones) read 0.
TEST(ResultJson, ProtocolCooldownRoundTripsAndIsOmittedWhenNone) {
  RunInfo in = test::full_run();
  EXPECT_FALSE(reparse(to_json(in)).at("protocol").contains("cooldown_ms"));
  EXPECT_EQ(run_info_from_json(reparse(to_json(in))).protocol.cooldown_ms, 0.0);
  in.protocol.cooldown_ms = 400;
  const json j = reparse(to_json(in));
  EXPECT_EQ(j.at("protocol").at("cooldown_ms"), 400.0);
  EXPECT_EQ(run_info_from_json(j).protocol.cooldown_ms, 400.0);
}

TEST(ResultJson, RunOsRoundTripsAndIsOmittedWhenUnknown) {
  RunInfo in = test::full_run();
  EXPECT_FALSE(to_json(in).contains("os"));  // runs recorded before the field: unchanged JSON
  in.os = "Ubuntu 24.04.1 LTS (Linux 6.8.0-49-generic)";
  const json j = reparse(to_json(in));
  EXPECT_EQ(j.at("os"), in.os);
  EXPECT_EQ(run_info_from_json(j).os, in.os);
}

TEST(ResultJson, CaseRoundTripKeepsEveryField) {
  const CaseResult in = test::full_case();
  const json j = reparse(to_json(in));
  EXPECT_EQ(j.at("record"), "case");
  EXPECT_EQ(j.at("problem").at("window"), json::array({256, 0}));
  EXPECT_EQ(j.at("problem").at("layout"), "bshd");
  EXPECT_EQ(j.at("memory").at("device_bytes_peak"), 75497472);
  EXPECT_EQ(j.at("knobs").at("block_m"), 128);

  const CaseResult out = case_result_from_json(j);
  EXPECT_EQ(out.case_id, "c0ffee1234567890");
  EXPECT_EQ(out.kernel, "fa2.mma");
  EXPECT_EQ(out.knobs, (Knobs{{"block_m", 128}, {"stages", 2}}));
  EXPECT_EQ(out.problem, test::gqa_problem());
  EXPECT_EQ(out.status, Status::ok);
  EXPECT_EQ(out.reason, "");
  ASSERT_TRUE(out.timing.has_value());
  EXPECT_EQ(out.timing->median_ms, 0.5);
  EXPECT_EQ(out.timing->min_ms, 0.48);
  EXPECT_EQ(out.timing->max_ms, 0.61);
  EXPECT_EQ(out.timing->mean_ms, 0.51);
  EXPECT_EQ(out.timing->std_ms, 0.02);
  EXPECT_EQ(out.timing->q1_ms, 0.49);
  EXPECT_EQ(out.timing->q3_ms, 0.52);
  EXPECT_EQ(out.timing->noise_pct, 0.3);
  EXPECT_EQ(out.timing->samples, 200);
  EXPECT_TRUE(out.timing->converged);
  EXPECT_EQ(out.timing->launches_per_sample, 4);
  EXPECT_EQ(out.flops, 1234567890123.0);
  EXPECT_EQ(out.min_bytes, 50331648);
  EXPECT_EQ(out.tflops, 2.469135780246);  // exact: doubles are written with round-trip digits
  EXPECT_EQ(out.gbps, 100.663296);
  EXPECT_EQ(out.queries_per_s, 65536000.0);
  ASSERT_TRUE(out.correctness.has_value());
  EXPECT_EQ(out.correctness->max_abs, 0.0078125);
  EXPECT_EQ(out.correctness->rel_l2, 0.000123);
  EXPECT_EQ(out.correctness->tol, 0.002);
  EXPECT_TRUE(out.correctness->pass);
  EXPECT_EQ(out.correctness->reference, "cuda.reference+cpu.reference(rows)");
  EXPECT_EQ(out.correctness->tol_rule, "2x cudnn.sdpa (rel_l2 1.2e-4)");
  EXPECT_EQ(out.correctness->nonfinite, 3);
  EXPECT_EQ(out.correctness->sampled_rows_rel_l2, 0.000119);
  EXPECT_EQ(out.correctness->sampled_rows, 64);
  EXPECT_EQ(out.device_bytes_peak, 75497472);
  EXPECT_EQ(out.nvtx_range, "attn/fa2.mma/2x16x1024x128");
  ASSERT_TRUE(out.clocks.has_value());
  EXPECT_EQ(out.clocks->sm_mhz, 1980.0);
  EXPECT_EQ(out.clocks->mem_mhz, 2619.0);
  EXPECT_EQ(out.clocks->temp_c, 54.0);
  EXPECT_EQ(out.clocks->power_w, 412.5);
  EXPECT_EQ(out.wall_s, 1.25);
  EXPECT_EQ(to_json(out), j);
}

TEST(ResultJson, AbsentOptionalsAreOmittedAndStayAbsent) {
  const json j = reparse(to_json(test::minimal_case()));
  for (const char* key : {"timing", "tflops", "gbps", "queries_per_s", "correctness", "memory", "clocks"})
    EXPECT_FALSE(j.contains(key)) << key;
  EXPECT_EQ(j.at("status"), "skipped");
  EXPECT_EQ(j.at("reason"), "backend cuda: not built");
  const CaseResult out = case_result_from_json(j);
  EXPECT_FALSE(out.timing.has_value());
  EXPECT_FALSE(out.tflops.has_value());
  EXPECT_FALSE(out.gbps.has_value());
  EXPECT_FALSE(out.queries_per_s.has_value());
  EXPECT_FALSE(out.correctness.has_value());
  EXPECT_FALSE(out.device_bytes_peak.has_value());
  EXPECT_FALSE(out.clocks.has_value());
  EXPECT_EQ(out.problem.window, (Window{-1, -1}));

  RunInfo run;  // a CPU run: no GPU, no peaks
  run.run_id = "cpu-run";
  run.backend = "cpu";
  const json r = reparse(to_json(run));
  EXPECT_FALSE(r.contains("gpu"));
  EXPECT_EQ(r.at("peaks"), json::object());
  const RunInfo back = run_info_from_json(r);
  EXPECT_FALSE(back.gpu.has_value());
  EXPECT_FALSE(back.peaks.tensor_tflops_measured.has_value());
  EXPECT_FALSE(back.peaks.dram_gbps_datasheet.has_value());

  // Inside objects too: a GPU without clocks, a check without sampled rows.
  RunInfo gpu_run = test::full_run();
  gpu_run.gpu->sm_clock_mhz.reset();
  gpu_run.gpu->mem_clock_mhz.reset();
  gpu_run.gpu->mem_bus_bits.reset();
  const json g = to_json(gpu_run).at("gpu");
  EXPECT_FALSE(g.contains("clocks"));
  EXPECT_FALSE(g.contains("mem_bus_bits"));
  CaseResult c = test::full_case();
  c.correctness->sampled_rows.reset();
  c.correctness->sampled_rows_rel_l2.reset();
  c.clocks = Clocks{std::nullopt, std::nullopt, 61.0, std::nullopt};
  const json cj = reparse(to_json(c));
  EXPECT_FALSE(cj.at("correctness").contains("sampled_rows"));
  EXPECT_FALSE(cj.at("correctness").contains("sampled_rows_rel_l2"));
  EXPECT_EQ(cj.at("clocks"), (json{{"temp_c", 61.0}}));
  const CaseResult cb = case_result_from_json(cj);
  EXPECT_FALSE(cb.correctness->sampled_rows.has_value());
  EXPECT_FALSE(cb.clocks->sm_mhz.has_value());
  EXPECT_EQ(cb.clocks->temp_c, 61.0);
}

TEST(ResultJson, NonFiniteDoublesRoundTripAsStrings) {
  CaseResult c = test::full_case();
  c.status = Status::mismatch;
  c.correctness->max_abs = std::numeric_limits<double>::quiet_NaN();
  c.correctness->rel_l2 = std::numeric_limits<double>::infinity();
  c.correctness->sampled_rows_rel_l2 = -std::numeric_limits<double>::infinity();
  c.tflops = std::numeric_limits<double>::quiet_NaN();
  const std::string text = to_json(c).dump();
  EXPECT_EQ(text.find("null"), std::string::npos) << text;
  const json j = json::parse(text);
  EXPECT_EQ(j.at("correctness").at("max_abs"), "nan");
  EXPECT_EQ(j.at("correctness").at("rel_l2"), "inf");
  EXPECT_EQ(j.at("correctness").at("sampled_rows_rel_l2"), "-inf");
  EXPECT_EQ(j.at("tflops"), "nan");
  const CaseResult out = case_result_from_json(j);
  EXPECT_TRUE(std::isnan(out.correctness->max_abs));
  EXPECT_EQ(out.correctness->rel_l2, std::numeric_limits<double>::infinity());
  EXPECT_EQ(out.correctness->sampled_rows_rel_l2, -std::numeric_limits<double>::infinity());
  ASSERT_TRUE(out.tflops.has_value());
  EXPECT_TRUE(std::isnan(*out.tflops));
}

TEST(ResultJson, UnknownFieldsIgnoredNullIsAbsentDefaultsDerived) {
  json j = to_json(test::minimal_case());
  j["future_field"] = {{"grid", {1, 2, 3}}};  // a field this reader does not know
  j["tflops"] = nullptr;
  j["problem"] = {{"batch", 3}, {"heads_q", 8}, {"seq_q", 100}, {"head_dim", 64}, {"dtype", "fp16"}};
  const CaseResult c = case_result_from_json(j);
  EXPECT_FALSE(c.tflops.has_value());
  EXPECT_EQ(c.problem.batch, 3);
  EXPECT_EQ(c.problem.heads_kv, 8);
  EXPECT_EQ(c.problem.seq_kv, 100);
  EXPECT_EQ(c.problem.head_dim_v, 64);
  EXPECT_EQ(c.problem.dtype, DType::fp16);
  EXPECT_FALSE(c.problem.causal);
}

// The message of the ResultsFormatError `f` throws, or "" when it does not throw.
template <class F>
std::string format_error(F&& f) {
  try {
    f();
  } catch (const ResultsFormatError& e) {
    return e.what();
  }
  return "";
}

TEST(ResultJson, BadRecordsNameTheField) {
  json j = to_json(test::full_case());
  j["timing"]["median_ms"] = "fast";
  EXPECT_EQ(format_error([&] { case_result_from_json(j); }),
            "case.timing.median_ms: expected a number or \"nan\"/\"inf\"/\"-inf\", got \"fast\"");

  j = to_json(test::full_case());
  j["status"] = "great";
  EXPECT_NE(format_error([&] { case_result_from_json(j); }).find("case.status: expected ok, skipped"),
            std::string::npos);

  j = to_json(test::full_case());
  j.erase("kernel");
  EXPECT_EQ(format_error([&] { case_result_from_json(j); }), "case.kernel: required field is missing");

  j = to_json(test::full_case());
  j["problem"]["window"] = {1};
  EXPECT_EQ(format_error([&] { case_result_from_json(j); }),
            "case.problem.window: expected [left, right], got [1]");

  j = to_json(test::full_case());
  j["schema"] = "attnscope.result.v0";
  EXPECT_EQ(format_error([&] { case_result_from_json(j); }),
            "schema: expected \"attnscope.result.v1\", got \"attnscope.result.v0\"");

  // A run record where a case is expected, and the other way round.
  EXPECT_EQ(format_error([&] { case_result_from_json(to_json(test::full_run())); }),
            "record: expected a \"case\" record, got \"run\"");
  EXPECT_EQ(format_error([&] { run_info_from_json(to_json(test::full_case())); }),
            "record: expected a \"run\" record, got \"case\"");

  json r = to_json(test::full_run());
  r["gpu"]["cc"] = "nine";
  EXPECT_EQ(format_error([&] { run_info_from_json(r); }),
            "run.gpu.cc: expected \"major.minor\" such as \"9.0\", got \"nine\"");
}

// CUPTI metrics (per kernel + aggregate), launch statistics, roofline, the ncu command, the
// NVML throttle fields and the run's measured peaks and metric list survive JSON; an absent
// metrics object stays absent (an unavailable run never reads as zeros).
TEST(ResultJson, MetricsLaunchRooflineAndPeaksRoundTrip) {
  CaseResult c = test::full_case();
  LaunchStats l;
  l.name = "void flash_fwd<128>(Params)";
  l.grid = {8, 16, 2};
  l.block = {128, 1, 1};
  l.regs = 168;
  l.smem_static = 1024;
  l.smem_dynamic = 98304;
  l.local_bytes = 16;
  l.smem_config = 233472;
  l.occupancy_theoretical = 12.5;
  c.launch = {l, l};
  c.launch[1].name = "softmax";
  c.launch[1].smem_config.reset();
  CaseMetrics m;
  KernelMetrics k;
  k.name = "void flash_fwd<128>(Params)";
  k.sm_throughput_pct = 71.25;
  k.dram_throughput_pct = 12.5;
  k.dram_bytes_read = 3.0e8;
  k.dram_bytes_write = 1.0e8;
  k.dram_bytes = 4.0e8;
  k.l2_throughput_pct = 33.0;
  k.tensor_pipe_pct = 61.0;
  k.achieved_occupancy_pct = 11.75;
  k.tensor_flops = 1.1e12;
  k.tensor_pct_of_peak = 55.5;
  k.gpu_time_ns = 512000;
  k.extra["lts__t_bytes.sum"] = 9.5e8;
  m.kernels = {k};
  m.aggregate = k;
  m.aggregate.name.clear();
  m.passes = 13;
  m.wall_s = 0.75;
  c.metrics = m;
  c.metrics_status = MetricsStatus::ok;
  Roofline r;
  r.algorithmic_intensity = 2200;
  r.achieved_intensity = 1100;
  r.peak_tflops = 700;
  r.peak_gbps = 3000;
  r.peak_source = "measured";
  r.ridge_intensity = 233.3;
  r.attainable_tflops = 700;
  r.pct_of_roofline = 62.5;
  r.bound = "compute";
  c.roofline = r;
  c.ncu_command = "ncu --nvtx --nvtx-include 'attnscope@x\\/y/metrics]' attnscope run";
  c.clocks->throttle_mask = 0x4 | 0x40;
  c.clocks->clocks_dropped = true;
  c.clocks->sm_mhz_min = 1755.0;

  const json j = reparse(to_json(c));
  EXPECT_EQ(j.at("launch").size(), 2u);
  EXPECT_EQ(j.at("launch")[0].at("grid"), json::array({8, 16, 2}));
  EXPECT_FALSE(j.at("launch")[1].contains("smem_config"));
  EXPECT_EQ(j.at("metrics").at("dram_bytes"), 4.0e8);
  EXPECT_EQ(j.at("metrics").at("kernels")[0].at("name"), "void flash_fwd<128>(Params)");
  EXPECT_EQ(j.at("metrics").at("extra").at("lts__t_bytes.sum"), 9.5e8);
  EXPECT_EQ(j.at("metrics").at("passes"), 13);
  EXPECT_EQ(j.at("clocks").at("throttle_reasons"), json::array({"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_EQ(j.at("roofline").at("bound"), "compute");

  const CaseResult out = case_result_from_json(j);
  ASSERT_EQ(out.launch.size(), 2u);
  EXPECT_EQ(out.launch[0].name, l.name);
  EXPECT_EQ(out.launch[0].block, l.block);
  EXPECT_EQ(out.launch[0].regs, 168);
  EXPECT_EQ(out.launch[0].smem_dynamic, 98304);
  EXPECT_EQ(out.launch[0].local_bytes, 16);
  EXPECT_EQ(out.launch[0].smem_config, 233472);
  EXPECT_EQ(out.launch[0].occupancy_theoretical, 12.5);
  EXPECT_FALSE(out.launch[1].smem_config.has_value());
  ASSERT_TRUE(out.metrics.has_value());
  EXPECT_EQ(out.metrics->passes, 13);
  EXPECT_EQ(out.metrics->wall_s, 0.75);
  ASSERT_EQ(out.metrics->kernels.size(), 1u);
  EXPECT_EQ(out.metrics->kernels[0].tensor_flops, 1.1e12);
  EXPECT_EQ(out.metrics->kernels[0].extra.at("lts__t_bytes.sum"), 9.5e8);
  EXPECT_EQ(out.metrics->aggregate.sm_throughput_pct, 71.25);
  EXPECT_EQ(out.metrics->aggregate.gpu_time_ns, 512000);
  EXPECT_EQ(out.metrics_status, MetricsStatus::ok);
  ASSERT_TRUE(out.roofline.has_value());
  EXPECT_EQ(out.roofline->achieved_intensity, 1100);
  EXPECT_EQ(out.roofline->pct_of_roofline, 62.5);
  EXPECT_EQ(out.roofline->peak_source, "measured");
  EXPECT_EQ(out.ncu_command, c.ncu_command);
  EXPECT_EQ(out.clocks->throttle_mask, 0x44u);
  EXPECT_EQ(out.clocks->clocks_dropped, true);
  EXPECT_EQ(out.clocks->sm_mhz_min, 1755.0);
  EXPECT_EQ(to_json(out), j);

  // Unavailable: a status and reason, and no metrics object at all.
  CaseResult u = test::full_case();
  u.metrics_status = MetricsStatus::unavailable;
  u.metrics_reason = "unavailable in this run (see the run record's metrics_reason)";
  const json uj = reparse(to_json(u));
  EXPECT_FALSE(uj.contains("metrics"));
  EXPECT_FALSE(uj.contains("launch"));
  EXPECT_FALSE(uj.contains("roofline"));
  EXPECT_FALSE(uj.contains("ncu_command"));
  EXPECT_EQ(uj.at("metrics_status"), "unavailable");
  const CaseResult uout = case_result_from_json(uj);
  EXPECT_FALSE(uout.metrics.has_value());
  EXPECT_EQ(uout.metrics_reason, u.metrics_reason);
  EXPECT_FALSE(reparse(to_json(test::full_case())).contains("metrics_status"));

  RunInfo run = test::full_run();
  run.peaks.tensor_tflops_fp16_measured = 655.5;
  run.peaks.tensor_tflops_bf16_measured = 661.5;
  run.peaks.measured_at = "2025-01-02T03:00:00Z";
  run.metrics_names = {"gpu__time_duration.sum", "dram__bytes_read.sum"};
  run.metrics_passes = 13;
  run.metrics_status = MetricsStatus::ok;
  run.protocol.metrics = "+lts__t_bytes.sum";
  const json rj = reparse(to_json(run));
  EXPECT_EQ(rj.at("protocol").at("metrics"), "+lts__t_bytes.sum");
  const RunInfo rout = run_info_from_json(rj);
  EXPECT_EQ(rout.peaks.tensor_tflops_fp16_measured, 655.5);
  EXPECT_EQ(rout.peaks.tensor_tflops_bf16_measured, 661.5);
  EXPECT_EQ(rout.peaks.measured_at, "2025-01-02T03:00:00Z");
  EXPECT_EQ(rout.metrics_names, run.metrics_names);
  EXPECT_EQ(rout.metrics_passes, 13);
  EXPECT_EQ(rout.metrics_status, MetricsStatus::ok);
  EXPECT_EQ(rout.protocol.metrics, "+lts__t_bytes.sum");
  EXPECT_EQ(to_json(rout), rj);
  RunInfo off = test::full_run();
  off.metrics_status = MetricsStatus::unavailable;
  off.metrics_reason = "libcupti.so.13 could not be loaded";
  const RunInfo offout = run_info_from_json(reparse(to_json(off)));
  EXPECT_FALSE(offout.metrics_passes.has_value());
  EXPECT_EQ(offout.metrics_reason, off.metrics_reason);
}

TEST(ResultJson, ProblemAdlConversion) {
  const Problem p = test::gqa_problem();
  const json j = p;  // through the ADL to_json
  EXPECT_EQ(j, (json{{"batch", 2},
                     {"heads_q", 16},
                     {"heads_kv", 4},
                     {"seq_q", 1024},
                     {"seq_kv", 2048},
                     {"head_dim", 128},
                     {"head_dim_v", 64},
                     {"dtype", "bf16"},
                     {"causal", true},
                     {"window", {256, 0}},
                     {"layout", "bshd"}}));
  EXPECT_EQ(j.get<Problem>(), p);
}

}  // namespace
}  // namespace attn
