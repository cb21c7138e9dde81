// build_plot() over a synthetic results file: series per kernel and mask, speedups against the
// baseline on the same problem, best-of combining, latency units, several runs, errors, names.
#include <gtest/gtest.h>

#include <algorithm>

#include "plot_fixture.hpp"
#include "reports/plot/plot_build.hpp"

namespace attn::plot {
namespace {

namespace fs = std::filesystem;

std::vector<LoadedRun> fixture_runs() {
  // One folder per test: CTest runs the tests of this file in parallel processes.
  const fs::path dir =
      fs::path(::testing::TempDir()) / (std::string("attnscope_plot_build_") +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
  return {read_results(test::write_plot_fixture(dir))};
}

double tflops(std::int64_t seq, bool causal, const std::string& kernel) {
  return test::small_problem(seq, causal).flops() / (test::plot_median(kernel, seq, causal) * 1e-3) / 1e12;
}

std::vector<std::string> labels(const Plot& p) {
  std::vector<std::string> v;
  for (const Series& s : p.series) v.push_back(s.label);
  return v;
}

TEST(PlotBuild, OneSeriesPerKernelAndMaskSortedByX) {
  const auto runs = fixture_runs();
  PlotSpec spec;
  spec.x = "seq";
  spec.y = "tflops";
  const Plot p = build_plot(runs, spec);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"cudnn.sdpa causal", "cudnn.sdpa full", "fa2.mma causal",
                                                 "fa2.mma full"}));
  for (std::size_t i = 0; i < p.series.size(); ++i) EXPECT_EQ(p.series[i].color, series_style(i).color);
  const Series& s = p.series[3];
  EXPECT_EQ(s.kernel, "fa2.mma");
  EXPECT_EQ(s.x, (std::vector<double>{128, 256, 512}));
  ASSERT_EQ(s.y.size(), 3u);
  EXPECT_NEAR(s.y[2], tflops(512, false, "fa2.mma"), 1e-9 * s.y[2]);
  EXPECT_EQ(p.x.title(), "Sequence length [tokens]");
  EXPECT_EQ(p.y.title(), "Throughput [TFLOPS]");
  EXPECT_EQ(p.title, "NVIDIA H100 80GB HBM3: TFLOPS vs sequence length");
  EXPECT_EQ(p.subtitle, "B=1, H=2, D=32, fp32");
  EXPECT_TRUE(p.x.data_ticks.empty());  // 128, 256, 512 are not evenly spaced on a linear axis
  spec.log_x = true;                    // on a log axis, powers of two get ticks at the swept sizes
  EXPECT_EQ(build_plot(runs, spec).x.data_ticks, (std::vector<double>{128, 256, 512}));
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes[0], "1 cases not ok are not plotted (1 skipped)");
}

// Issue 20: a run with several passes plots each pass as its own series of each kernel, named by
// the pass; a run of the forward alone names no pass; `pass` is an axis to facet or group by.
TEST(PlotBuild, PassesAreSeriesOfTheirOwn) {
  LoadedRun run;
  run.run.backend = "cpu";
  for (const Pass pass : {Pass::fwd, Pass::bwd})
    for (const std::int64_t seq : {128, 256}) {
      Problem p = test::small_problem(seq, true);
      p.pass = pass;
      CaseResult c = test::ok_case("cpu.flash", p, pass == Pass::fwd ? 1.0 : 2.0, 1e-6);
      c.case_id += std::string("/") + std::string(to_string(pass));
      run.cases.push_back(c);
    }
  PlotSpec spec;
  spec.x = "seq";
  spec.y = "tflops";
  Plot p = build_plot({run}, spec);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"cpu.flash bwd", "cpu.flash fwd"}));
  for (const Series& s : p.series) EXPECT_EQ(s.x, (std::vector<double>{128, 256}));
  // bwd: 2.5x the forward's FLOPs in twice the time.
  EXPECT_NEAR(p.series[0].y[0], 1.25 * p.series[1].y[0], 1e-9 * p.series[0].y[0]);
  spec.group_by = {"pass"};
  EXPECT_EQ(build_plot({run}, spec).series.size(), 2u);
  run.cases.resize(2);  // the forward alone: one series, no pass in its name or the subtitle
  spec.group_by.clear();
  p = build_plot({run}, spec);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"cpu.flash"}));
  EXPECT_EQ(p.subtitle.find("fwd"), std::string::npos) << p.subtitle;
}

TEST(PlotBuild, SpeedupAgainstTheBaselineOnTheSameProblem) {
  const auto runs = fixture_runs();
  PlotSpec spec;
  spec.y = "speedup";  // baseline from the run record: cudnn.sdpa
  spec.kind = PlotKind::bars;
  const Plot p = build_plot(runs, spec);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"fa2.mma causal", "fa2.mma full"}));
  ASSERT_EQ(p.series[0].y.size(), 3u);
  for (double y : p.series[0].y) EXPECT_NEAR(y, 3, 1e-12);
  EXPECT_EQ(p.series[1].y, (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(p.series[0].x, (std::vector<double>{0, 1, 2}));  // category indices
  EXPECT_EQ(p.x.categories, (std::vector<std::string>{"128", "256", "512"}));
  ASSERT_EQ(p.hlines.size(), 1u);
  EXPECT_EQ(p.hlines[0].value, 1);
  EXPECT_EQ(p.hlines[0].label, "cudnn.sdpa = 1");
  EXPECT_EQ(p.y.title(), "Speedup over cudnn.sdpa [×]");
  EXPECT_EQ(default_plot_filename(runs, spec, p), "NVIDIA_H100_80GB_HBM3_fa2.mma_Speedup.png");
  spec.y = "tflops";
  EXPECT_EQ(default_plot_filename(runs, spec, p), "NVIDIA_H100_80GB_HBM3.png");
}

TEST(PlotBuild, ExplicitGroupingKeepsTheBestOfCombinedCases) {
  const auto runs = fixture_runs();
  PlotSpec spec;
  spec.group_by = {"dtype"};
  const Plot p = build_plot(runs, spec);
  // dtype has one value: labels name only what differs between series, the subtitle keeps fp32.
  EXPECT_EQ(labels(p), (std::vector<std::string>{"cudnn.sdpa", "fa2.mma"}));
  EXPECT_NE(p.subtitle.find("fp32"), std::string::npos) << p.subtitle;
  // causal and full share an x now: the higher TFLOPS (full) stays.
  const double causal = tflops(256, true, "fa2.mma"), full = tflops(256, false, "fa2.mma");
  EXPECT_GT(full, causal * 1.2);
  EXPECT_NEAR(p.series[1].y[1], full, 1e-9 * full);
  ASSERT_EQ(p.notes.size(), 2u);
  EXPECT_NE(p.notes[1].find("6 points stand for several cases"), std::string::npos) << p.notes[1];
  spec.y = "latency";  // lower is better: the smaller median stays; every median < 1 ms -> µs
  const Plot l = build_plot(runs, spec);
  EXPECT_EQ(l.y.unit, "µs");
  EXPECT_NEAR(l.series[1].y[0], test::plot_median("fa2.mma", 128, true) * 1e3, 1e-9);
}

TEST(PlotBuild, SeveralRunsPrefixTheRunId) {
  const fs::path dir = fs::path(::testing::TempDir()) / "attnscope_plot_build_b";
  std::vector<LoadedRun> runs = fixture_runs();
  runs.push_back(read_results(test::write_plot_fixture(dir, "second")));
  PlotSpec spec;
  spec.x = "seq";
  const Plot p = build_plot(runs, spec);
  ASSERT_EQ(p.series.size(), 8u);
  EXPECT_EQ(p.series[0].label, "h100-run: cudnn.sdpa causal");
  EXPECT_EQ(p.series[4].label, "second: cudnn.sdpa causal");
}

TEST(PlotBuild, RunsWithDistinctKernelsKeepPlainLabels) {
  // An attnscope run beside an external baseline's run (tools/torch_sdpa.py): no kernel is in
  // both, so the kernel names alone are unambiguous.
  const fs::path dir = fs::path(::testing::TempDir()) / "attnscope_plot_build_distinct";
  std::vector<LoadedRun> runs = fixture_runs();
  runs.push_back(read_results(test::write_plot_fixture(dir, "torch")));
  for (CaseResult& c : runs[1].cases) c.kernel = c.kernel == "cudnn.sdpa" ? "torch.cudnn" : "torch.flash";
  PlotSpec spec;
  spec.x = "seq";
  const Plot p = build_plot(runs, spec);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"cudnn.sdpa causal", "cudnn.sdpa full", "fa2.mma causal",
                                                 "fa2.mma full", "torch.cudnn causal", "torch.cudnn full",
                                                 "torch.flash causal", "torch.flash full"}));
  spec.kernels = {"fa2.mma", "torch.flash"};
  EXPECT_EQ(
      labels(build_plot(runs, spec)),
      (std::vector<std::string>{"fa2.mma causal", "fa2.mma full", "torch.flash causal", "torch.flash full"}));
}

TEST(PlotBuild, KernelsAndWhereSelectTheCases) {
  const auto runs = fixture_runs();
  PlotSpec spec;
  spec.x = "seq";
  spec.kernels = {"fa2.mma"};
  Plot p = build_plot(runs, spec);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"fa2.mma causal", "fa2.mma full"}));
  ASSERT_EQ(p.notes.size(), 1u);  // fa2.mma's skipped case; cudnn.sdpa has none
  EXPECT_EQ(p.notes[0], "1 cases not ok are not plotted (1 skipped)");

  spec.where = {"causal=1"};  // 0/1 for causal; the mask then is fixed and goes to the subtitle
  p = build_plot(runs, spec);
  ASSERT_EQ(p.series.size(), 1u);
  EXPECT_EQ(p.series[0].label, "fa2.mma");
  EXPECT_EQ(p.series[0].x, (std::vector<double>{128, 256, 512}));
  EXPECT_NEAR(p.series[0].y[1], tflops(256, true, "fa2.mma"), 1e-9 * p.series[0].y[1]);
  EXPECT_EQ(p.subtitle, "B=1, H=2, D=32, fp32, causal");

  // Values of one axis are alternatives; axes combine.
  spec.kernels.clear();
  spec.where = {"seq=128", "seq=512", "mask=full"};
  p = build_plot(runs, spec);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"cudnn.sdpa", "fa2.mma"}));
  EXPECT_EQ(p.series[1].x, (std::vector<double>{128, 512}));

  // Speedup: the baseline is found although --kernels leaves it out.
  spec = {};
  spec.y = "speedup";
  spec.kernels = {"fa2.mma"};
  spec.where = {"causal=0"};
  p = build_plot(runs, spec);
  ASSERT_EQ(p.series.size(), 1u);
  EXPECT_EQ(p.series[0].y, (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(default_plot_filename(runs, spec, p), "NVIDIA_H100_80GB_HBM3_fa2.mma_Speedup.png");
}

TEST(PlotBuild, FilterErrorsNameTheFlagAndWhatTheResultsHold) {
  const auto runs = fixture_runs();
  auto message = [&](std::vector<std::string> kernels, std::vector<std::string> where) {
    PlotSpec spec;
    spec.kernels = std::move(kernels);
    spec.where = std::move(where);
    try {
      build_plot(runs, spec);
    } catch (const PlotSpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({"fa2.mma", "ffpa.l1.acc_f16"}, {}),
            "--kernels ffpa.l1.acc_f16: no case of that kernel in these results; kernels there: cudnn.sdpa, "
            "fa2.mma");
  EXPECT_EQ(message({}, {"head_dim=64"}),
            "--where head_dim=64: no case in these results has head_dim 64; values there: 32");
  EXPECT_EQ(message({}, {"dtype=fp16"}),
            "--where dtype=fp16: no case in these results has dtype fp16; values there: fp32");
  EXPECT_EQ(message({}, {"head_dim"}),
            "--where head_dim: expected AXIS=VALUE, e.g. head_dim=128, causal=1 or mask=full");
  EXPECT_EQ(message({}, {"seq=1k"}), "--where seq=1k: '1k' is not a whole number");
  EXPECT_EQ(message({}, {"colour=red"}).rfind("--where colour=red: unknown axis colour; allowed: batch, ", 0),
            0u);
  // Only a skipped case has seq 1024: the filter accepts it, but nothing is left to plot.
  EXPECT_EQ(message({}, {"seq=1024"}),
            "--y tflops: no ok case to plot among the cases --kernels/--where select");
}

TEST(PlotBuild, MetricsPresentInTheRecordsArePlottable) {
  const auto runs = fixture_runs();
  const auto names = plot_metrics(runs);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 4),
            (std::vector<std::string>{"tflops", "speedup", "latency", "gbps"}));
  EXPECT_NE(std::find(names.begin(), names.end(), "noise_pct"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "rel_l2"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "power_w"), names.end());  // no clocks in these records
  PlotSpec spec;
  spec.y = "noise_pct";
  const Plot p = build_plot(runs, spec);
  EXPECT_EQ(p.series[0].y, (std::vector<double>{0.8, 0.8, 0.8}));
  EXPECT_EQ(p.y.title(), "Noise of the median [%]");
}

TEST(PlotBuild, ErrorsNameTheFlagTheValueAndWhatIsAllowed) {
  const auto runs = fixture_runs();
  auto message = [&](PlotSpec spec) {
    try {
      build_plot(runs, spec);
    } catch (const PlotSpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  PlotSpec s;
  s.x = "sequence";
  EXPECT_EQ(message(s),
            "--x sequence: unknown axis; allowed: batch, tokens, heads, heads_kv, hidden, seq, seq_q, "
            "seq_kv, head_dim, head_dim_v, dtype, causal, window, mask, pass, knobs, device, host");
  s = {};
  s.y = "tflop";
  EXPECT_EQ(
      message(s).rfind("--y tflop: not a measurement in these results; allowed: tflops, speedup, latency, "
                       "gbps, ",
                       0),
      0u)
      << message(s);
  s = {};
  s.y = "speedup";
  s.baseline = "fa3.wgmma";
  EXPECT_EQ(message(s),
            "--baseline fa3.wgmma: no ok case of that kernel in the results; kernels with ok cases: "
            "cudnn.sdpa, fa2.mma");
  s = {};
  s.group_by = {"seq"};
  EXPECT_EQ(message(s), "--group-by seq: that is the x axis; group by the other axes");
  s = {};
  s.group_by = {"colour"};
  EXPECT_EQ(message(s).rfind("--group-by colour: unknown axis; allowed: batch", 0), 0u);
  s = {};
  s.x = "dtype";
  EXPECT_NE(message(s).find("--x dtype: a categorical axis needs --kind bars"), std::string::npos);
  s.kind = PlotKind::bars;
  EXPECT_EQ(message(s), "no error");
  RunInfo none = test::full_run();
  none.baseline.clear();
  std::vector<LoadedRun> no_baseline{runs[0]};
  no_baseline[0].run = none;
  PlotSpec sp;
  sp.y = "speedup";
  try {
    build_plot(no_baseline, sp);
    ADD_FAILURE() << "no error";
  } catch (const PlotSpecError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--y speedup needs --baseline KERNEL (the results name none); kernels with ok "
              "cases: cudnn.sdpa, fa2.mma");
  }
}

TEST(PlotBuild, CpuRunsAreNamedCpu) {
  std::vector<LoadedRun> runs = fixture_runs();
  runs[0].run.backend = "cpu";
  runs[0].run.gpu.reset();
  PlotSpec spec;
  EXPECT_EQ(default_plot_filename(runs, spec, build_plot(runs, spec)), "CPU.png");
}

}  // namespace
}  // namespace attn::plot
