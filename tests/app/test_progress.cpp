// ProgressReporter: pinned plain lines for a log, the redrawn interactive line, and the ETA,
// all with an injected clock.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "app/cli/progress.hpp"
#include "tests/reports/sample_results.hpp"

namespace attn {
namespace {

// Captures what the reporter prints (open_memstream: a FILE* backed by memory).
class Capture {
 public:
  Capture() : m_file(::open_memstream(&m_buf, &m_size)) {}
  ~Capture() {
    if (m_file != nullptr) std::fclose(m_file);
    std::free(m_buf);
  }
  std::FILE* file() const { return m_file; }
  std::string text() {
    std::fflush(m_file);
    return std::string(m_buf, m_size);
  }

 private:
  char* m_buf = nullptr;
  std::size_t m_size = 0;
  std::FILE* m_file;
};

// A clock the test moves by hand [s].
struct FakeClock {
  double t = 100.0;
  ProgressReporter::Clock fn() {
    return [this] { return t; };
  }
};

std::vector<CaseResult> four_cases() {
  const Problem p = test::small_problem(64, false);
  CaseResult bad = test::ok_case("naive.unfused", test::small_problem(64, true), 0.0456, 0.5);
  bad.status = Status::mismatch;
  bad.reason = "rel_l2 5.0e-01 above tol\n1.0e-05";
  bad.tflops.reset();
  return {test::ok_case("cpu.reference", p, 2.0, 0.0), test::ok_case("cpu.flash", p, 0.123, 3e-7),
          test::skipped_case("fa2.mma", p, "backend cuda: not built"), bad};
}

TEST(Progress, PlainLinesArePinned) {
  Capture cap;
  FakeClock clock;
  ProgressReporter rep(cap.file(), 4, false, clock.fn());
  const auto cases = four_cases();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    rep.begin_case(i, cases[i].kernel);
    clock.t += 0.5;
    rep.end_case(cases[i]);
  }
  rep.finish();
  EXPECT_EQ(cap.text(),
            "[1/4] cpu.reference 1x2x64x32 fp32 full: ok 2.000 ms 0.001 TFLOPS\n"
            "[2/4] cpu.flash 1x2x64x32 fp32 full: ok 0.123 ms 0.009 TFLOPS\n"
            "[3/4] fa2.mma 1x2x64x32 fp32 full: skipped (backend cuda: not built)\n"
            "[4/4] naive.unfused 1x2x64x32 fp32 causal: mismatch 45.60 µs rel_l2 5.0e-01 > tol 1.0e-05 "
            "(rel_l2 5.0e-01 above tol 1.0e-05)\n"
            "done: 4 of 4 cases in 2.0 s (2 ok, 1 skipped, 1 mismatch)\n");
}

TEST(Progress, PlainLineAlignsTheCounter) {
  const CaseResult c = test::skipped_case("fa2.mma", test::small_problem(64, false), "");
  EXPECT_EQ(progress_line(7, 120, c), "[  7/120] fa2.mma 1x2x64x32 fp32 full: skipped");
}

TEST(Progress, InteractiveLineIsRedrawnInPlace) {
  Capture cap;
  FakeClock clock;
  ProgressReporter rep(cap.file(), 4, true, clock.fn(), 90);
  const auto cases = four_cases();
  rep.begin_case(0, "cpu.reference 1x2x64x32 fp32 full");
  EXPECT_EQ(
      cap.text(),
      "\r[--------------------] [1/4] cpu.reference 1x2x64x32 fp32 full  0:00 elapsed, ETA --:--\x1b[K");
  clock.t += 10;
  rep.end_case(cases[0]);
  clock.t += 4;
  rep.begin_case(1, "cpu.flash 1x2x64x32 fp32 full with a label far too long for eighty columns");
  // One of four done, mean 10 s per case, 3 left: ETA 0:30; the label is cut so the line takes
  // 89 of the 90 columns and never wraps.
  const std::string text = cap.text();
  const std::string line = text.substr(text.rfind('\r'));
  EXPECT_EQ(
      line,
      "\r[#####---------------] [2/4] cpu.flash 1x2x64x32 fp32 full wit...  0:14 elapsed, ETA 0:30\x1b[K");
  EXPECT_EQ(line.size(), 1 + 89 + 3u);  // \r, the text, ESC [ K
  EXPECT_EQ(rep.eta_s(), 30.0);
  clock.t += 6;  // the running case has taken 6 s of the 30 s left
  EXPECT_EQ(rep.eta_s(), 24.0);
  rep.end_case(cases[1]);
  rep.begin_case(2, "fa2.mma");
  rep.end_case(cases[2]);
  rep.begin_case(3, "naive.unfused");
  const std::size_t before = cap.text().size();
  rep.end_case(cases[3]);
  // A mismatch leaves a permanent line above the redrawn bar.
  EXPECT_EQ(
      cap.text().substr(before),
      "\r\x1b[K[4/4] naive.unfused 1x2x64x32 fp32 causal: mismatch 45.60 µs rel_l2 5.0e-01 > tol 1.0e-05 "
      "(rel_l2 5.0e-01 above tol 1.0e-05)\n"
      "\r[####################] [4/4] naive.unfused  0:20 elapsed, ETA 0:00\x1b[K");
  rep.finish();
  EXPECT_EQ(cap.text().substr(cap.text().rfind('\r')),
            "\r\x1b[Kdone: 4 of 4 cases in 20.0 s (2 ok, 1 skipped, 1 mismatch)\n");
}

TEST(Progress, ClockFormat) {
  EXPECT_EQ(format_clock(0.4), "0:00");
  EXPECT_EQ(format_clock(7), "0:07");
  EXPECT_EQ(format_clock(725), "12:05");
  EXPECT_EQ(format_clock(3723), "1:02:03");
}

}  // namespace
}  // namespace attn
