// The terminal summary table: pinned layout, baseline speedups, unit choice, shortened reasons
// and the status footer.
#include <gtest/gtest.h>

#include "reports/summary_table.hpp"
#include "reports/text_format.hpp"
#include "tests/reports/golden.hpp"
#include "tests/reports/sample_results.hpp"

namespace attn {
namespace {

// Two problems, a baseline on each, a faster kernel, a skipped kernel (long reason) and a
// mismatched one. Speedups: 2.0/0.5 = 4.00x and 4.0/0.8 = 5.00x; the mismatch 4.0/0.25 = 16.00x.
std::vector<CaseResult> sweep() {
  const Problem p1 = test::small_problem(64, false);
  const Problem p2 = test::small_problem(128, true);
  CaseResult bad = test::ok_case("naive.unfused", p2, 0.25, 0.31);
  bad.status = Status::mismatch;
  bad.reason = "rel_l2 3.1e-01 above tol 1.0e-05 (fp32 bound)";
  CaseResult gqa = test::ok_case("cpu.flash", test::gqa_problem(), 12.5, 2e-6);
  gqa.knobs = {{"block_n", 64}};
  return {
      test::ok_case("cpu.reference", p1, 2.0, 0.0),
      test::ok_case("cpu.flash", p1, 0.5, 3e-7),
      test::skipped_case("fa2.mma", p1,
                         "backend cuda: this build has no CUDA (configure with -DATTNSCOPE_ENABLE_CUDA=ON "
                         "on a machine with nvcc)\nsecond line"),
      test::ok_case("cpu.reference", p2, 4.0, 0.0),
      test::ok_case("cpu.flash", p2, 0.8, 4e-7),
      bad,
      gqa};
}

TEST(SummaryTable, GoldenWithBaseline) {
  test::expect_golden("summary_baseline.txt", format_summary(sweep(), "cpu.reference"));
}

TEST(SummaryTable, SpeedupIsBaselineMedianOverCaseMedian) {
  const std::string t = format_summary(sweep(), "cpu.reference");
  EXPECT_NE(t.find("speedup vs cpu.reference"), std::string::npos);
  EXPECT_NE(t.find("4.00x"), std::string::npos);
  EXPECT_NE(t.find("5.00x"), std::string::npos);
  EXPECT_NE(t.find("16.00x"), std::string::npos);
  EXPECT_NE(t.find("7 cases: 5 ok, 1 skipped, 1 mismatch\n"), std::string::npos) << t;
  EXPECT_NE(t.find("2 of 4 kernels measured\n"), std::string::npos) << t;
  // The full reason is cut (it stays whole in the files) and never breaks the row.
  EXPECT_EQ(t.find("second line"), std::string::npos);
  EXPECT_NE(t.find("backend cuda: this build has no CUDA (configure with -DAT..."), std::string::npos) << t;
}

TEST(SummaryTable, MicrosecondsWithoutBaselineColumn) {
  const Problem p = test::small_problem(64, false);
  const std::string t = format_summary(
      {test::ok_case("cpu.flash", p, 0.0123, 3e-7), test::ok_case("cpu.reference", p, 0.5, 0.0)}, "");
  test::expect_golden("summary_us.txt", t);
  EXPECT_NE(t.find("median [µs]"), std::string::npos);
  EXPECT_EQ(t.find("speedup"), std::string::npos);
}

TEST(SummaryTable, MissingBaselineGivesDash) {
  const Problem p = test::small_problem(64, false);
  const std::string t = format_summary({test::ok_case("cpu.flash", p, 1.5, 3e-7)}, "cudnn.sdpa");
  EXPECT_EQ(
      t,
      "kernel     config               status  median [ms]  MFLOPS  speedup vs cudnn.sdpa  correctness\n"
      "---------  -------------------  ------  -----------  ------  ---------------------  ------------\n"
      "cpu.flash  1x2x64x32 fp32 full  ok            1.500   699.1                      -  3.0e-07 pass\n"
      "\n"
      "1 case: 1 ok\n"
      "1 of 1 kernels measured\n");
}

TEST(TextFormat, NumbersAndLabels) {
  EXPECT_EQ(format_fixed4(1234.4), "1234");
  EXPECT_EQ(format_fixed4(123.44), "123.4");
  EXPECT_EQ(format_fixed4(12.344), "12.34");
  EXPECT_EQ(format_fixed4(1.2344), "1.234");
  EXPECT_EQ(format_fixed4(0.0004), "0.000");
  EXPECT_EQ(format_duration_ms(0.123), "0.123 ms");
  EXPECT_EQ(format_duration_ms(0.0456), "45.60 µs");
  EXPECT_EQ(config_label(test::gqa_problem(), {{"block_m", 128}}),
            "2x16x1024x128 bf16 causal+win256,0 Hkv=4 Sk=2048 Dv=64 block_m=128");
  EXPECT_EQ(display_width("median [µs]"), 11u);
  EXPECT_EQ(shorten("abcdefgh", 6), "abc...");
  EXPECT_EQ(shorten("µµµµµµµ", 5), "µµ...");
  EXPECT_EQ(shorten("short", 6), "short");
  EXPECT_EQ(one_line("a\r\nb\tc"), "a b c");
}

}  // namespace
}  // namespace attn

#include "reports/time_breakdown.hpp"

namespace attn {
namespace {

TEST(TimeBreakdown, SharesOfTheWorkersTimeInCaseOrder) {
  RunTotals t;
  t.wall_s = 40;
  t.slots = 2;  // 80 s of worker time
  t.cases = 60;
  t.case_wall_s = 72;
  t.phases.inputs_s = 8;
  t.phases.reference_s = 20;
  t.phases.warmup_s = 1.2;
  t.phases.timed_s = 40;
  t.phases.other_s = 2.8;
  t.worker_start_s = 2;
  t.handoff_s = 0.4;
  t.idle_s = 5.6;
  EXPECT_EQ(format_time_breakdown(t),
            "time: 40.0 s wall on 2 worker slots; 60 cases took 72.0 s (90%): inputs 8.00 s (10%), "
            "reference 20.0 s (25%), warm-up 1.20 s (2%), timed samples 40.0 s (50%), other 2.80 s (4%)\n"
            "      outside the cases: worker starts 2.00 s (2%), hand-off 0.40 s (0%), idle 5.60 s (7%)\n");
  EXPECT_EQ(format_time_breakdown(RunTotals{}), "");
}

}  // namespace
}  // namespace attn
