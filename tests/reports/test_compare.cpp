// attnscope compare: the noise-aware verdict rule, pairing, ordering, the pinned Markdown, CSV and
// JSON forms, and the command's exit codes (a planted 20% slowdown exits 1, a run against itself 0).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "reports/compare.hpp"
#include "tests/reports/golden.hpp"
#include "tests/reports/sample_results.hpp"
#include "tests/reports/test_report_util.hpp"

namespace attn {
namespace {

CaseResult timed(const std::string& kernel, const Problem& p, double median_ms, double noise_pct) {
  CaseResult c = test::ok_case(kernel, p, median_ms, 0.0);
  c.timing->noise_pct = noise_pct;
  return c;
}

struct Pair {
  std::vector<CaseResult> base, now;
};

// One case per verdict, plus a case only in each run.
Pair sample() {
  const Problem p64 = test::small_problem(64, false), p128 = test::small_problem(128, true);
  Pair s;
  s.base = {timed("k.slow", p64, 1.0, 0.8),  timed("k.noisy", p128, 1.0, 5.0),
            timed("k.fast", p64, 2.0, 0.5),  timed("k.same", p128, 2.0, 0.5),
            timed("k.broke", p64, 1.0, 0.5), test::skipped_case("k.skip", p128, "not built"),
            timed("k.gone", p64, 1.0, 0.5)};
  CaseResult broke = timed("k.broke", p64, 1.0, 0.5);
  broke.status = Status::mismatch;
  broke.reason = "rel_l2 3e-1 > tol";
  s.now = {timed("k.slow", p64, 1.2, 0.8),
           timed("k.noisy", p128, 1.05, 5.0),
           timed("k.fast", p64, 1.6, 0.5),
           timed("k.same", p128, 2.02, 0.5),
           broke,
           test::skipped_case("k.skip", p128, "not built"),
           timed("k.new", p64, 1.0, 0.5)};
  return s;
}

CompareReport sample_report() {
  const Pair s = sample();
  CompareReport r = compare_results(s.base, s.now, CompareOptions{});
  r.base_label = "base/results.jsonl (run-a)";
  r.new_label = "new/results.jsonl (run-b)";
  return r;
}

const CompareRow& row_of(const CompareReport& r, const std::string& kernel) {
  for (const CompareRow& row : r.rows)
    if (row.kernel == kernel) return row;
  throw std::runtime_error("no row for " + kernel);
}

TEST(Compare, VerdictPerCase) {
  const CompareReport r = sample_report();
  EXPECT_EQ(row_of(r, "k.slow").verdict, Verdict::slower);
  EXPECT_EQ(row_of(r, "k.noisy").verdict, Verdict::ambiguous);  // +5% but se 7.2% of the median
  EXPECT_EQ(row_of(r, "k.fast").verdict, Verdict::faster);
  EXPECT_EQ(row_of(r, "k.same").verdict, Verdict::same);  // +1%, inside 3%
  EXPECT_EQ(row_of(r, "k.broke").verdict, Verdict::failed);
  EXPECT_EQ(row_of(r, "k.skip").verdict, Verdict::not_compared);
  EXPECT_EQ(r.missing(), 1u);  // k.gone
  ASSERT_EQ(r.only_base.size(), 1u);
  EXPECT_EQ(r.only_base[0].kernel, "k.gone");
  ASSERT_EQ(r.only_new.size(), 1u);
  EXPECT_EQ(r.only_new[0].kernel, "k.new");
  EXPECT_TRUE(r.regressed());
  // Regressions first.
  EXPECT_EQ(r.rows[0].verdict, Verdict::slower);
  EXPECT_EQ(r.rows[1].verdict, Verdict::failed);
  // z = (1.2 - 1.0) / hypot(0.008, 0.0096).
  EXPECT_NEAR(*row_of(r, "k.slow").z, 0.2 / std::hypot(0.008, 0.0096), 1e-9);
  EXPECT_NEAR(*row_of(r, "k.slow").ratio, 1.2, 1e-12);
}

TEST(Compare, ThresholdIsSymmetricInLogSpace) {
  const Problem p = test::small_problem(64, false);
  CompareOptions o;
  o.threshold = 0.10;
  // 1.0 -> 0.92: ratio 0.92 > 1/1.1 = 0.909, so "same"; 0.90 is beyond it, "faster".
  EXPECT_EQ(compare_results({timed("k", p, 1.0, 0.1)}, {timed("k", p, 0.92, 0.1)}, o).rows[0].verdict,
            Verdict::same);
  EXPECT_EQ(compare_results({timed("k", p, 1.0, 0.1)}, {timed("k", p, 0.90, 0.1)}, o).rows[0].verdict,
            Verdict::faster);
  // The mirror image of a faster case is a slower one.
  EXPECT_EQ(compare_results({timed("k", p, 0.90, 0.1)}, {timed("k", p, 1.0, 0.1)}, o).rows[0].verdict,
            Verdict::slower);
}

TEST(Compare, SigmaDecidesBetweenSlowerAndAmbiguous) {
  const Problem p = test::small_problem(64, false);
  // +10% with 3% noise on each median: se = hypot(0.03, 0.033) = 0.0446; z = 2.24.
  const auto b = timed("k", p, 1.0, 3.0), n = timed("k", p, 1.1, 3.0);
  CompareOptions o;
  o.sigma = 2.0;
  EXPECT_EQ(compare_results({b}, {n}, o).rows[0].verdict, Verdict::slower);
  o.sigma = 2.5;
  EXPECT_EQ(compare_results({b}, {n}, o).rows[0].verdict, Verdict::ambiguous);
}

TEST(Compare, StandardErrorFallbacks) {
  TimingStats t;
  t.median_ms = 2.0;
  t.noise_pct = 1.5;
  EXPECT_NEAR(*median_standard_error(t), 0.03, 1e-12);
  t.noise_pct = 0;
  t.samples = 16;
  t.q1_ms = 1.9;
  t.q3_ms = 2.1;
  EXPECT_NEAR(*median_standard_error(t), 1.2533 * 0.2 / 1.349 / 4.0, 1e-12);
  t.samples = 4;
  t.std_ms = 0.2;
  EXPECT_NEAR(*median_standard_error(t), 1.2533 * 0.2 / 2.0, 1e-12);
  t.samples = 1;
  EXPECT_FALSE(median_standard_error(t).has_value());
}

TEST(Compare, UnknownSpreadFallsBackToTheThreshold) {
  const Problem p = test::small_problem(64, false);
  CaseResult b = timed("k", p, 1.0, 0), n = timed("k", p, 1.2, 0);
  for (CaseResult* c : {&b, &n}) c->timing->samples = 1;
  const CompareReport r = compare_results({b}, {n}, CompareOptions{});
  EXPECT_EQ(r.rows[0].verdict, Verdict::slower);
  EXPECT_FALSE(r.rows[0].z.has_value());
}

TEST(Compare, ParseThreshold) {
  EXPECT_DOUBLE_EQ(*parse_threshold("3%"), 0.03);
  EXPECT_DOUBLE_EQ(*parse_threshold("3"), 0.03);
  EXPECT_DOUBLE_EQ(*parse_threshold("0.5%"), 0.005);
  for (const char* bad : {"3x", "", "%", "-1%", "0", "abc", "1e9", "nan", "3%%"})
    EXPECT_FALSE(parse_threshold(bad).has_value()) << bad;
}

// Issue 24 item 2: a NEW run lacking most BASE cases said "No regression". Missing cases (absent,
// or ok in BASE and skipped in NEW) are a regression unless allowed; a case that newly fails is one
// in any case.
TEST(Compare, MissingCasesAreARegressionUnlessAllowed) {
  const Problem p = test::small_problem(64, false);
  std::vector<CaseResult> base;
  for (const char* k : {"k.a", "k.b", "k.c", "k.d"}) base.push_back(timed(k, p, 1.0, 0.5));
  const std::vector<CaseResult> now = {timed("k.a", p, 1.0, 0.5),
                                       test::skipped_case("k.b", p, "not built here")};
  CompareReport r = compare_results(base, now, CompareOptions{});
  EXPECT_EQ(row_of(r, "k.a").verdict, Verdict::same);
  EXPECT_EQ(row_of(r, "k.b").verdict, Verdict::missing);
  EXPECT_EQ(r.only_base.size(), 2u);
  EXPECT_EQ(r.missing(), 3u);
  EXPECT_TRUE(r.regressed());
  EXPECT_EQ(r.regression_counts(), "3 missing from NEW");
  EXPECT_NE(compare_markdown(r).find("**REGRESSION: 3 missing from NEW**"), std::string::npos)
      << compare_markdown(r);
  const auto j = nlohmann::json::parse(compare_json(r));
  EXPECT_EQ(j["missing"], 3);
  EXPECT_EQ(j["counts"]["missing"], 1);
  EXPECT_EQ(j["regressed"], true);

  CompareOptions allow;
  allow.allow_missing = true;
  r = compare_results(base, now, allow);
  EXPECT_FALSE(r.regressed());
  EXPECT_NE(compare_markdown(r).find("3 BASE cases not measured in NEW, allowed by --allow-missing"),
            std::string::npos);
  // A status change ok -> fault stays a regression with --allow-missing.
  CaseResult fault = timed("k.a", p, 1.0, 0.5);
  fault.status = Status::fault;
  fault.timing.reset();
  r = compare_results(base, {fault}, allow);
  EXPECT_EQ(row_of(r, "k.a").verdict, Verdict::failed);
  EXPECT_TRUE(r.regressed());
  EXPECT_EQ(r.regression_counts(), "1 failed");
}

TEST(Compare, GoldenMarkdown) { test::expect_golden("compare.md", compare_markdown(sample_report())); }
TEST(Compare, GoldenCsv) { test::expect_golden("compare.csv", compare_csv(sample_report())); }
TEST(Compare, GoldenJson) {
  const std::string j = compare_json(sample_report());
  test::expect_golden("compare.json", j);
  const auto parsed = nlohmann::json::parse(j);
  EXPECT_EQ(parsed["counts"]["slower"], 1);
  EXPECT_EQ(parsed["regressed"], true);
}

class CompareCli : public test::TempDirTest {
 protected:
  // Four timed cases of two kernels; `slow_factor` scales one case's median (and spread).
  std::filesystem::path run(const std::string& name, double slow_factor) {
    std::vector<CaseResult> cases;
    for (const std::int64_t seq : {64, 128})
      for (const char* k : {"cpu.reference", "cpu.flash"})
        cases.push_back(timed(k, test::small_problem(seq, false), seq == 64 ? 1.0 : 3.0, 0.5));
    CaseResult& planted = cases[1];
    planted.timing->median_ms *= slow_factor;
    RunInfo r = test::full_run();
    r.run_id = name;
    return write_run(name, r, cases);
  }
};

TEST_F(CompareCli, PlantedTwentyPercentSlowdownExitsOne) {
  const auto base = run("base", 1.0), slow = run("slow", 1.2);
  const CliOutcome o = run_cli("compare " + base.string() + " " + slow.string());
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("| slower | cpu.flash | 1x2x64x32 fp32 full | 1.000 ms | 1.200 ms | +20.0% |"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("REGRESSION"), std::string::npos);
}

TEST_F(CompareCli, RunAgainstItselfExitsZero) {
  const auto base = run("base", 1.0);
  const CliOutcome o = run_cli("compare " + base.string() + " " + (base / "results.jsonl").string());
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("4 paired cases: 4 same"), std::string::npos) << o.output;
}

TEST_F(CompareCli, FormatsAndOutputFile) {
  const auto base = run("base", 1.0), slow = run("slow", 1.2);
  const auto csv = m_dir / "cmp.csv";
  const CliOutcome o =
      run_cli("compare --format csv -o " + csv.string() + " " + base.string() + " " + slow.string());
  EXPECT_EQ(o.exit_code, 1) << o.output;
  const std::string text = slurp(csv);
  EXPECT_EQ(text.rfind("verdict,case_id,kernel,", 0), 0u) << text;
  EXPECT_NE(text.find("\nslower,"), std::string::npos);
  const CliOutcome j = run_cli("compare --format json " + base.string() + " " + slow.string());
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_NE(j.output.find("\"schema\": \"attnscope.compare.v1\""), std::string::npos) << j.output;
}

TEST_F(CompareCli, BadInputExitsTwo) {
  const auto base = run("base", 1.0);
  const std::string b = base.string();
  auto o = run_cli("compare " + b + " " + (m_dir / "missing").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("no such file or directory"), std::string::npos) << o.output;
  o = run_cli("compare --threshold 3x " + b + " " + b);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("--threshold '3x'"), std::string::npos) << o.output;
  o = run_cli("compare --format xml " + b + " " + b);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  o = run_cli("compare " + b);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  // A file that is not results JSONL.
  std::ofstream(m_dir / "junk.jsonl") << "not json\n";
  o = run_cli("compare " + b + " " + (m_dir / "junk.jsonl").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
}

TEST_F(CompareCli, NewRunLackingBaseCasesExitsOneNamingHowMany) {
  const auto base = run("base", 1.0);
  // NEW keeps only the first of the four cases.
  const std::string text = slurp(base / "results.jsonl");
  std::size_t end = text.find('\n');
  end = text.find('\n', end + 1);
  std::filesystem::create_directories(m_dir / "few");
  std::ofstream(m_dir / "few" / "results.jsonl") << text.substr(0, end + 1);
  const std::string args = base.string() + " " + (m_dir / "few").string();
  CliOutcome o = run_cli("compare " + args);
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("3 of 4 BASE cases not measured in NEW"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("-> exit 1 (regression: 3 missing from NEW)"), std::string::npos) << o.output;
  o = run_cli("compare --allow-missing " + args);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("allowed by --allow-missing"), std::string::npos) << o.output;
}

// Issue 24 item 1: the same case twice in a results file crashed report, compare and crossover.
TEST_F(CompareCli, RepeatedCaseLineIsDroppedWithAWarningByEveryReader) {
  const auto base = run("base", 1.0);
  const std::string text = slurp(base / "results.jsonl");
  const std::size_t line2 = text.find('\n') + 1;
  std::filesystem::create_directories(m_dir / "dup");
  const auto dup = m_dir / "dup" / "results.jsonl";
  std::ofstream(dup) << text << text.substr(line2, text.find('\n', line2) + 1 - line2);  // line 6 = line 2
  const std::string warning = dup.string() + ":6: case ";
  for (const std::string& cmd :
       {"compare " + base.string() + " " + dup.string(),
        "report --no-figures -o " + (m_dir / "r.md").string() + " " + dup.string(),
        "crossover " + dup.string() + " --a cpu.flash --b cpu.reference --axis seq"}) {
    const CliOutcome o = run_cli(cmd);
    EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 1) << cmd << "\n" << o.output;
    EXPECT_NE(o.output.find(warning), std::string::npos) << cmd << "\n" << o.output;
    EXPECT_NE(o.output.find("repeats line 2"), std::string::npos) << cmd << "\n" << o.output;
  }
  EXPECT_EQ(run_cli("compare " + base.string() + " " + dup.string()).exit_code, 0);
}

}  // namespace
}  // namespace attn
