// The one timed/measured-case rule and baseline lookup (reports/case_query.hpp), and the Table renderers
// every report section and the terminal summary use.
#include <gtest/gtest.h>

#include <limits>

#include "reports/case_query.hpp"
#include "reports/table.hpp"
#include "tests/reports/sample_results.hpp"

namespace attn {
namespace {

TEST(CaseQuery, TimedMedianIsFiniteAndPositiveMeasuredAlsoNeedsOk) {
  const Problem p = test::small_problem(64, false);
  CaseResult c = test::ok_case("fa2.mma", p, 0.25, 1e-6);
  EXPECT_EQ(timed_median_ms(c), 0.25);
  EXPECT_EQ(measured_median_ms(c), 0.25);
  EXPECT_TRUE(is_measured(c));

  // A non-ok case that carries timing shows its time but is not measured.
  CaseResult timed_mismatch = c;
  timed_mismatch.status = Status::mismatch;
  EXPECT_EQ(timed_median_ms(timed_mismatch), 0.25);
  EXPECT_EQ(measured_median_ms(timed_mismatch), std::nullopt);
  EXPECT_FALSE(is_measured(timed_mismatch));

  for (const double bad :
       {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    CaseResult b = c;
    b.timing->median_ms = bad;
    EXPECT_EQ(timed_median_ms(b), std::nullopt) << bad;
    EXPECT_FALSE(is_measured(b)) << bad;
  }
  CaseResult untimed = c;
  untimed.timing.reset();
  EXPECT_FALSE(is_measured(untimed));
  EXPECT_EQ(timed_median_ms(untimed), std::nullopt);
}

TEST(CaseQuery, BaselineIsTheFastestMeasuredBaselineOnTheSameProblem) {
  const Problem p = test::small_problem(64, false), q = test::small_problem(128, false);
  std::vector<CaseResult> cases{
      test::ok_case("cudnn.sdpa", p, 0.5, 1e-6), test::ok_case("cudnn.sdpa", p, 0.4, 1e-6),
      test::ok_case("cudnn.sdpa", q, 0.1, 1e-6), test::ok_case("fa2.mma", p, 0.2, 1e-6)};
  CaseResult broken = test::ok_case("cudnn.sdpa", p, 0.01, 1e-6);  // faster, but a mismatch
  broken.status = Status::mismatch;
  cases.push_back(broken);
  EXPECT_EQ(baseline_median_ms(cases, "cudnn.sdpa", p), 0.4);
  EXPECT_EQ(baseline_median_ms(cases, "cudnn.sdpa", q), 0.1);
  EXPECT_EQ(baseline_median_ms(cases, "", p), std::nullopt);
  EXPECT_EQ(baseline_median_ms(cases, "cublas.unfused", p), std::nullopt);
  EXPECT_DOUBLE_EQ(*speedup_over(cases, "cudnn.sdpa", cases[3]), 2.0);
  // A timed non-ok case still gets the speedup of its own time (tables show it beside its status).
  EXPECT_DOUBLE_EQ(*speedup_over(cases, "cudnn.sdpa", broken), 40.0);
  CaseResult other = test::ok_case("fa2.mma", test::small_problem(256, false), 0.2, 1e-6);
  EXPECT_EQ(speedup_over(cases, "cudnn.sdpa", other), std::nullopt);  // no baseline on that problem
  // Variants are baselines by their label.
  CaseResult variant = test::ok_case("fa2.mma", p, 0.3, 1e-6);
  variant.variant = "fa2.mma@br=64";
  cases.push_back(variant);
  EXPECT_EQ(baseline_median_ms(cases, "fa2.mma@br=64", p), 0.3);
  EXPECT_EQ(baseline_median_ms(cases, "fa2.mma", p), 0.2);
}

Table sample_table() {
  Table t({{"kernel"}, {"median [ms]", Align::right}});
  t.add_row({"fa2.mma", "0.25"});
  t.add_row({"a|b, \"c\"\nd", "12.5"});
  return t;
}

TEST(Table, RendersMarkdownCsvTextAndJson) {
  const Table t = sample_table();
  EXPECT_EQ(t.markdown(),
            "| kernel | median [ms] |\n| --- | ---: |\n| fa2.mma | 0.25 |\n| a\\|b, \"c\" d | 12.5 |\n");
  EXPECT_EQ(t.csv(), "kernel,median [ms]\nfa2.mma,0.25\n\"a|b, \"\"c\"\"\nd\",12.5\n");
  Table plain({{"kernel"}, {"µs", Align::right}});
  plain.add_row({"fa2.mma", "5"});
  plain.add_row({"x", "12.25"});
  EXPECT_EQ(plain.text(), "kernel      µs\n-------  -----\nfa2.mma      5\nx        12.25\n");
  EXPECT_EQ(t.json().dump(),
            R"([{"kernel":"fa2.mma","median [ms]":"0.25"},{"kernel":"a|b, \"c\"\nd","median [ms]":"12.5"}])");
}

TEST(Table, RejectsARowOfTheWrongWidth) {
  Table t({{"a"}, {"b"}});
  EXPECT_THROW(t.add_row({"1"}), std::invalid_argument);
  EXPECT_TRUE(t.empty());
}

}  // namespace
}  // namespace attn
