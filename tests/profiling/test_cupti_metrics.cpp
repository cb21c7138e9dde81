// The metrics model without a GPU: --metrics syntax, metric-name validation (syntax here, the
// chip's catalogue through CUPTI's host API where libcupti loads), record fields from raw values,
// aggregation across the kernels of a case, the `unavailable` reasons, NVTX-filter escaping and
// the recorded ncu command.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "profiling/metrics.hpp"
#if ATTNSCOPE_HAS_CUDA
#include <cuda_runtime_api.h>

#include "profiling/cupti/range_profiler.hpp"
#endif

namespace attn {
namespace {

TEST(MetricsRequest, DefaultNoneAddAndOnly) {
  MetricsRequest r;
  std::string why;
  ASSERT_TRUE(parse_metrics_request("default", r, why));
  EXPECT_TRUE(r.enabled);
  EXPECT_EQ(r.names, default_metric_names());
  EXPECT_TRUE(r.extra.empty());
  ASSERT_TRUE(parse_metrics_request("", r, why));
  EXPECT_EQ(r.names, default_metric_names());

  ASSERT_TRUE(parse_metrics_request("none", r, why));
  EXPECT_FALSE(r.enabled);
  EXPECT_TRUE(r.names.empty());

  ASSERT_TRUE(parse_metrics_request("+lts__t_sectors.sum, dram__bytes_read.sum", r, why));
  EXPECT_EQ(r.names.size(), default_metric_names().size() + 1);  // dram__bytes_read.sum is already in
  EXPECT_EQ(r.names.back(), "lts__t_sectors.sum");
  EXPECT_EQ(r.extra, std::vector<std::string>{"lts__t_sectors.sum"});

  ASSERT_TRUE(parse_metrics_request("lts__t_sectors.sum,gpu__time_duration.sum,lts__t_sectors.sum", r, why));
  EXPECT_EQ(r.names, (std::vector<std::string>{"lts__t_sectors.sum", "gpu__time_duration.sum"}));
  EXPECT_EQ(r.extra, std::vector<std::string>{"lts__t_sectors.sum"});
}

TEST(MetricsRequest, RejectsBadListsNamingThePart) {
  MetricsRequest r;
  std::string why;
  EXPECT_FALSE(parse_metrics_request("+", r, why));
  EXPECT_NE(why.find("empty metric name"), std::string::npos) << why;
  EXPECT_FALSE(parse_metrics_request("lts__t_bytes.sum,,gpu__time_duration.sum", r, why));
  EXPECT_FALSE(parse_metrics_request("+none", r, why));
  EXPECT_NE(why.find("stands alone"), std::string::npos) << why;
  EXPECT_FALSE(parse_metrics_request("dram__bytes", r, why));
  EXPECT_NE(why.find("'dram__bytes'"), std::string::npos) << why;
  EXPECT_NE(why.find("rollup is missing"), std::string::npos) << why;
}

TEST(MetricNames, CatalogueForm) {
  EXPECT_EQ(metric_name_problem("dram__bytes_read.sum"), "");
  EXPECT_EQ(metric_name_problem("sm__throughput.avg.pct_of_peak_sustained_elapsed"), "");
  EXPECT_EQ(metric_name_problem("sm__ops_path_tensor_src_fp16.sum.peak_sustained"), "");
  EXPECT_EQ(metric_name_problem("lts__t_sector_hit_rate.pct"), "");
  EXPECT_NE(metric_name_problem("dram__bytes"), "");                            // no rollup
  EXPECT_NE(metric_name_problem("DRAM__bytes.sum"), "");                        // case-sensitive
  EXPECT_NE(metric_name_problem("dram_bytes.sum"), "");                         // no unit__
  EXPECT_NE(metric_name_problem("dram__bytes.total"), "");                      // not a rollup
  EXPECT_NE(metric_name_problem("lts__t_sector_hit_rate.pct.per_second"), "");  // ratio takes none
  EXPECT_NE(metric_name_problem("dram__bytes.sum.per-second"), "");
  EXPECT_NE(metric_name_problem(""), "");
}

std::map<std::string, double> raw_gemm_like(double time_ns, double pct, double bytes_read, double flops) {
  std::map<std::string, double> raw;
  raw[metric::kSmThroughput] = pct;
  raw[metric::kDramThroughput] = pct / 2;
  raw[metric::kDramRead] = bytes_read;
  raw[metric::kDramWrite] = bytes_read / 4;
  raw[metric::kL2Throughput] = pct / 3;
  raw[metric::kTensorPipe] = pct;
  raw[metric::kWarpsActive] = 12.5;
  raw[metric::kGpuTime] = time_ns;
  raw[tensor_flop_metrics()[0]] = flops;
  raw[tensor_flop_metrics()[1]] = 0;
  for (const auto& n : tensor_peak_pct_metrics()) raw[n] = 0;
  raw[tensor_peak_pct_metrics()[0]] = pct * 0.9;
  return raw;
}

TEST(KernelMetricsFrom, FieldsSumsAndNaNStaysAbsent) {
  auto raw = raw_gemm_like(1000, 80, 4e6, 2e9);
  raw["lts__t_bytes.sum"] = 5e6;
  const KernelMetrics k = kernel_metrics_from("gemm", raw, {"lts__t_bytes.sum", "lts__t_sectors.sum"});
  EXPECT_EQ(k.name, "gemm");
  EXPECT_DOUBLE_EQ(*k.sm_throughput_pct, 80);
  EXPECT_DOUBLE_EQ(*k.dram_bytes, 5e6);  // read + write
  EXPECT_DOUBLE_EQ(*k.tensor_flops, 2e9);
  EXPECT_DOUBLE_EQ(*k.tensor_pct_of_peak, 72);
  EXPECT_DOUBLE_EQ(*k.gpu_time_ns, 1000);
  EXPECT_EQ(k.extra.size(), 1u);  // the metric that was not collected is not invented
  EXPECT_DOUBLE_EQ(k.extra.at("lts__t_bytes.sum"), 5e6);

  raw[metric::kDramWrite] = std::numeric_limits<double>::quiet_NaN();
  raw.erase(tensor_flop_metrics()[1]);
  const KernelMetrics bad = kernel_metrics_from("gemm", raw, {});
  EXPECT_FALSE(bad.dram_bytes_write.has_value());
  EXPECT_FALSE(bad.dram_bytes.has_value());  // never half a sum
  EXPECT_FALSE(bad.tensor_flops.has_value());
  EXPECT_TRUE(bad.dram_bytes_read.has_value());
}

TEST(AggregateMetrics, CountersSumPercentagesWeightByTime) {
  // cublas.unfused-like: a GEMM (3 us, 90%), a softmax (1 us, 10%), a GEMM (4 us, 80%).
  std::vector<KernelMetrics> ks = {
      kernel_metrics_from("gemm1", raw_gemm_like(3000, 90, 1e6, 4e9), {}),
      kernel_metrics_from("softmax", raw_gemm_like(1000, 10, 2e6, 0), {}),
      kernel_metrics_from("gemm2", raw_gemm_like(4000, 80, 3e6, 4e9), {}),
  };
  const KernelMetrics a = aggregate_metrics(ks);
  EXPECT_TRUE(a.name.empty());
  EXPECT_DOUBLE_EQ(*a.gpu_time_ns, 8000);
  EXPECT_DOUBLE_EQ(*a.tensor_flops, 8e9);
  EXPECT_DOUBLE_EQ(*a.dram_bytes_read, 6e6);
  EXPECT_DOUBLE_EQ(*a.dram_bytes, 7.5e6);
  EXPECT_DOUBLE_EQ(*a.sm_throughput_pct, (90 * 3000 + 10 * 1000 + 80 * 4000) / 8000.0);
  EXPECT_DOUBLE_EQ(*a.achieved_occupancy_pct, 12.5);

  // A field one kernel lacks is absent in the aggregate.
  ks[1].l2_throughput_pct.reset();
  EXPECT_FALSE(aggregate_metrics(ks).l2_throughput_pct.has_value());
  // Without every kernel's time, percentages fall back to the plain mean.
  ks[1].gpu_time_ns.reset();
  EXPECT_DOUBLE_EQ(*aggregate_metrics(ks).sm_throughput_pct, 60.0);
  EXPECT_FALSE(aggregate_metrics({}).sm_throughput_pct.has_value());
}

TEST(AggregateMetrics, ExtraMetricsByTheirRollup) {
  EXPECT_EQ(rollup_of("lts__t_bytes.sum"), Rollup::sum);
  EXPECT_EQ(rollup_of("sm__warps_active.max"), Rollup::max);
  EXPECT_EQ(rollup_of("sm__warps_active.min"), Rollup::min);
  EXPECT_EQ(rollup_of("lts__t_bytes.sum.per_second"), Rollup::time_weighted_mean);
  EXPECT_EQ(rollup_of("lts__t_sector_hit_rate.pct"), Rollup::time_weighted_mean);
  KernelMetrics k1, k2;
  k1.gpu_time_ns = 1000;
  k2.gpu_time_ns = 3000;
  k1.extra = {
      {"lts__t_bytes.sum", 10}, {"lts__t_sector_hit_rate.pct", 40}, {"x__y.max", 7}, {"only__one.sum", 1}};
  k2.extra = {{"lts__t_bytes.sum", 20}, {"lts__t_sector_hit_rate.pct", 80}, {"x__y.max", 5}};
  const KernelMetrics a = aggregate_metrics({k1, k2});
  EXPECT_DOUBLE_EQ(a.extra.at("lts__t_bytes.sum"), 30);
  EXPECT_DOUBLE_EQ(a.extra.at("lts__t_sector_hit_rate.pct"), 70);
  EXPECT_DOUBLE_EQ(a.extra.at("x__y.max"), 7);
  EXPECT_EQ(a.extra.count("only__one.sum"), 0u);
}

TEST(MetricsUnavailable, ReasonsCarryTheFix) {
  const std::string priv =
      cupti_unavailable_reason(35, "cuptiRangeProfilerEnable", "insufficient privileges");
  EXPECT_NE(priv.find("cuptiRangeProfilerEnable returned CUPTI error 35"), std::string::npos) << priv;
  EXPECT_NE(priv.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_NE(priv.find("ERR_NVGPUCTRPERM"), std::string::npos);
  EXPECT_NE(cupti_unavailable_reason(15, "cuptiProfilerHostInitialize", "").find("LD_LIBRARY_PATH"),
            std::string::npos);
  EXPECT_NE(cupti_unavailable_reason(39, "cuptiRangeProfilerEnable", "").find("ncu_command"),
            std::string::npos);
  EXPECT_NE(cupti_unavailable_reason(43, "x", "").find("MIG"), std::string::npos);
  EXPECT_EQ(cupti_unavailable_reason(999, "cuptiProfilerInitialize", "unknown"),
            "cuptiProfilerInitialize returned CUPTI error 999: unknown");
}

TEST(MetricsUnavailable, InjectedProfilersAreRecognised) {
  EXPECT_EQ(injected_profiler(nullptr, nullptr), "");
  EXPECT_EQ(injected_profiler("", nullptr), "");
  EXPECT_EQ(injected_profiler("/opt/nvidia/nsight-compute/2025.3.1/target/linux-desktop-glibc_2_11_3-x64/"
                              "libTreeLauncherTargetInjection.so",
                              nullptr),
            "Nsight Compute");
  EXPECT_EQ(
      injected_profiler("/opt/nvidia/nsight-systems/2025.1/target-linux-x64/libToolsInjection64.so", nullptr),
      "Nsight Systems");
  EXPECT_EQ(injected_profiler(nullptr, "17"), "Nsight Systems");
  EXPECT_EQ(injected_profiler("/x/libmine.so", nullptr),
            "a CUDA tool injected through CUDA_INJECTION64_PATH=/x/libmine.so");
}

TEST(NcuCommand, EscapesTheRangeAndReproducesTheCase) {
  EXPECT_EQ(escape_nvtx_filter("cudnn.sdpa/2x16x1024x128/bf16/causal+win256,0"),
            "cudnn.sdpa\\/2x16x1024x128\\/bf16\\/causal\\+win256\\,0");
  EXPECT_EQ(escape_nvtx_filter("a@b[c]*d"), "a\\@b\\[c\\]\\*d");
  Problem p;
  p.batch = 2;
  p.heads_q = 16;
  p.heads_kv = 4;
  p.seq_q = 1024;
  p.seq_kv = 2048;
  p.head_dim = 128;
  p.head_dim_v = 128;
  p.dtype = DType::bf16;
  p.causal = true;
  p.window = {256, 0};
  Protocol proto;
  const std::string cmd = ncu_command_for("/opt/attnscope", "cudnn.sdpa", p, proto,
                                          {"gpu__time_duration.sum", "dram__bytes_read.sum"},
                                          "cudnn.sdpa/2x16x1024x128/bf16/causal+win256,0");
  EXPECT_EQ(
      cmd,
      "ncu --nvtx --nvtx-include "
      "'attnscope@cudnn.sdpa\\/2x16x1024x128\\/bf16\\/causal\\+win256\\,0/metrics]' "
      "--clock-control none --cache-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum "
      "/opt/attnscope run --backend=cuda --kernels=cudnn.sdpa --batch=2 --heads=16 --heads-kv=4 --seq-q=1024 "
      "--seq-kv=2048 --head-dim=128 --head-dim-v=128 --dtype=bf16 --causal=1 --window=256,0 "
      "--max-time-s=0.05 "
      "--l2=cold --seed=42 --out=/tmp/attnscope-ncu --force --quiet");
  // A backward case: its range ends in /bwd and the command runs that pass.
  p.pass = Pass::bwd;
  const std::string bwd =
      ncu_command_for("/opt/attnscope", "cudnn.sdpa", p, proto, {"gpu__time_duration.sum"},
                      "cudnn.sdpa/2x16x1024x128/bf16/causal+win256,0/bwd");
  EXPECT_NE(bwd.find("causal\\+win256\\,0\\/bwd/metrics]"), std::string::npos) << bwd;
  EXPECT_NE(bwd.find("--window=256,0 --pass=bwd --max-time-s=0.05"), std::string::npos) << bwd;
}

#if ATTNSCOPE_HAS_CUDA
// Host-side CUPTI needs libcupti and libnvperf_host but no GPU: skip where they do not load.
bool host_api_usable(std::string& why) {
  try {
    (void)cupti::count_passes("GH100", {"gpu__time_duration.sum"});
    return true;
  } catch (const cupti::MetricsError& e) {
    why = e.what();
    return false;
  }
}

TEST(CuptiHost, ValidatesNamesAgainstTheGh100Catalogue) {
  std::string why;
  if (!host_api_usable(why)) GTEST_SKIP() << "CUPTI host API not usable here: " << why;
  EXPECT_EQ(cupti::first_unknown_metric("GH100", default_metric_names()), "");
  const std::string bad = cupti::first_unknown_metric(
      "GH100", {"dram__bytes_read.sum", "sm__no_such_counter.sum", "gpu__time_duration.sum"});
  EXPECT_NE(bad.find("'sm__no_such_counter.sum' is not a metric of GH100"), std::string::npos) << bad;
  // A base name without rollup is refused by ConfigAddMetrics, as the guide found.
  EXPECT_NE(cupti::first_unknown_metric("GH100", {"dram__bytes"}), "");
}

TEST(CuptiHost, PassCountsOnGh100) {
  std::string why;
  if (!host_api_usable(why)) GTEST_SKIP() << "CUPTI host API not usable here: " << why;
  // Golden counts from shared/guides/cupti-metrics.md section 3, confirmed on the H100.
  EXPECT_EQ(cupti::count_passes("GH100", {"sm__throughput.avg.pct_of_peak_sustained_elapsed"}), 8);
  EXPECT_EQ(cupti::count_passes("GH100", {"lts__throughput.avg.pct_of_peak_sustained_elapsed"}), 4);
  EXPECT_EQ(cupti::count_passes("GH100", {"gpu__time_duration.sum", "dram__bytes_read.sum"}), 1);
  const int all = cupti::count_passes("GH100", default_metric_names());
  EXPECT_GE(all, 8);
  EXPECT_LE(all, 16);
}

TEST(CuptiUnavailable, NoGpuGivesAReasonNotMetrics) {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) GTEST_SKIP() << "a GPU is present; tests/gpu covers it";
  (void)cudaGetLastError();
  std::string why;
  auto p = cupti::RangeProfiler::create(default_metric_names(), why);
  EXPECT_EQ(p, nullptr);
  EXPECT_FALSE(why.empty());
}
#endif

}  // namespace
}  // namespace attn
