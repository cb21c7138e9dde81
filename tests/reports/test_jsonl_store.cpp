// results.jsonl: streamed writing, reading back, a torn last line, a corrupt middle line, and
// refusing to overwrite.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "reports/jsonl_store.hpp"
#include "reports/result_set.hpp"
#include "tests/reports/sample_results.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

class JsonlStore : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir =
        fs::temp_directory_path() / ("attnscope-jsonl-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  static std::string slurp(const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void spit(const fs::path& f, const std::string& text) {
    std::ofstream(f, std::ios::binary | std::ios::trunc) << text;
  }
  // A run plus three cases, written by the real writer into a nested directory.
  fs::path write_three() {
    const fs::path file = m_dir / "runs" / "r1" / "results.jsonl";
    JsonlWriter w = JsonlWriter::create(file, test::full_run(), false);
    w.append(test::full_case());
    w.append(test::minimal_case());
    w.append(test::ok_case("cpu.flash", test::small_problem(64, false), 0.123, 1e-7));
    EXPECT_EQ(w.lines_written(), 4u);
    return file;
  }

  fs::path m_dir;
};

TEST_F(JsonlStore, WriteThenReadBack) {
  const fs::path file = write_three();
  const std::string text = slurp(file);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);
  const LoadedRun r = read_results(file);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.run.run_id, "20250102-030405-h100");
  EXPECT_EQ(r.run.gpu->sms, 132);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[0].case_id, "c0ffee1234567890");
  EXPECT_EQ(r.cases[0].timing->median_ms, 0.5);
  EXPECT_EQ(r.cases[1].status, Status::skipped);
  EXPECT_FALSE(r.cases[1].timing.has_value());
  EXPECT_EQ(r.cases[2].kernel, "cpu.flash");
  EXPECT_EQ(r.cases[2].timing->median_ms, 0.123);
  EXPECT_EQ(r.cases[2].problem, test::small_problem(64, false));
}

TEST_F(JsonlStore, EachLineIsOnDiskRightAfterAppend) {
  const fs::path file = m_dir / "results.jsonl";
  JsonlWriter w = JsonlWriter::create(file, test::full_run(), false);
  EXPECT_EQ(read_results(file).cases.size(), 0u);
  w.append(test::full_case());
  // Read while the writer is still open: the line must already be there.
  EXPECT_EQ(read_results(file).cases.size(), 1u);
  JsonlWriter moved = std::move(w);
  moved.append(test::minimal_case());
  moved.close();
  EXPECT_THROW(moved.append(test::minimal_case()), ResultsIoError);
  EXPECT_EQ(read_results(file).cases.size(), 2u);
}

TEST_F(JsonlStore, TruncatedLastLineIsIgnoredWithAWarning) {
  const fs::path file = write_three();
  std::string text = slurp(file);
  // A writer killed mid-line: the last case line loses its second half and its newline.
  const std::size_t last_start = text.rfind('\n', text.size() - 2) + 1;
  text.resize(last_start + (text.size() - last_start) / 2);
  spit(file, text);
  const LoadedRun r = read_results(file);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[1].case_id, "0000000000000001");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].rfind(file.string() + ":4: ignored an unparsable last line", 0), 0u)
      << r.warnings[0];

  // --resume cuts the torn line off, so the next append starts a clean line 4.
  LoadedRun loaded;
  JsonlWriter w = JsonlWriter::resume(file, loaded);
  EXPECT_EQ(loaded.cases.size(), 2u);
  EXPECT_EQ(loaded.warnings.size(), 1u);
  w.append(test::ok_case("cpu.reference", test::small_problem(64, false), 0.5, 0.0));
  w.close();
  const LoadedRun again = read_results(file);
  EXPECT_TRUE(again.warnings.empty());
  ASSERT_EQ(again.cases.size(), 3u);
  EXPECT_EQ(again.cases[2].kernel, "cpu.reference");
}

TEST_F(JsonlStore, ResumeAfterACompleteLastLineWithoutNewline) {
  const fs::path file = write_three();
  std::string text = slurp(file);
  text.pop_back();  // the final '\n' never made it to disk
  spit(file, text);
  LoadedRun loaded;
  JsonlWriter w = JsonlWriter::resume(file, loaded);
  EXPECT_EQ(loaded.cases.size(), 3u);
  // A case not yet in the file (a repeat of one would be dropped by the reader).
  w.append(test::ok_case("cpu.reference", test::small_problem(256, true), 0.2, 1e-7));
  w.close();
  EXPECT_EQ(read_results(file).cases.size(), 4u);
}

TEST_F(JsonlStore, CorruptMiddleLineThrowsWithItsLineNumber) {
  const fs::path file = write_three();
  std::string text = slurp(file);
  const std::size_t line3 = text.find('\n', text.find('\n') + 1) + 1;
  text.insert(line3 + 10, "#garbage#");
  spit(file, text);
  try {
    read_results(file);
    FAIL() << "expected ResultsFormatError";
  } catch (const ResultsFormatError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(file.string() + ":3: not valid JSON", 0), 0u) << msg;
  }
}

TEST_F(JsonlStore, InvalidRecordInTheMiddleNamesLineAndField) {
  const fs::path file = write_three();
  std::string text = slurp(file);
  const std::string from = "\"status\":\"skipped\"";
  text.replace(text.find(from), from.size(), "\"status\":\"sleepy\"");
  spit(file, text);
  try {
    read_results(file);
    FAIL() << "expected ResultsFormatError";
  } catch (const ResultsFormatError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(file.string() + ":3: case.status: expected ok", 0), 0u) << e.what();
  }
}

TEST_F(JsonlStore, WrongSchemaOrMissingRunRecordThrows) {
  fs::create_directories(m_dir);
  const fs::path file = m_dir / "results.jsonl";
  spit(file, "{\"schema\":\"other.v2\",\"record\":\"run\"}\n");
  EXPECT_THROW(read_results(file), ResultsFormatError);
  spit(file, "");
  EXPECT_THROW(read_results(file), ResultsFormatError);
  // A case first: the run record must lead.
  spit(file, to_json(test::full_case()).dump() + "\n");
  try {
    read_results(file);
    FAIL() << "expected ResultsFormatError";
  } catch (const ResultsFormatError& e) {
    EXPECT_EQ(std::string(e.what()), file.string() + ":1: record: expected a \"run\" record, got \"case\"");
  }
  EXPECT_THROW(read_results(m_dir / "missing.jsonl"), ResultsIoError);
}

TEST_F(JsonlStore, ExistingFileNeedsForce) {
  const fs::path file = write_three();
  try {
    JsonlWriter::create(file, test::full_run(), false);
    FAIL() << "expected ResultsExistError";
  } catch (const ResultsExistError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("--force"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--out"), std::string::npos) << msg;
  }
  EXPECT_EQ(read_results(file).cases.size(), 3u);  // untouched
  {
    JsonlWriter w = JsonlWriter::create(file, test::full_run(), true);
    w.append(test::minimal_case());
  }
  EXPECT_EQ(read_results(file).cases.size(), 1u);
}

// Issue 24 item 1: the same case twice in one file crashed load_result_set (it indexed the source
// of the file still being read). The reader now drops the repeat, naming both lines.
TEST_F(JsonlStore, RepeatedCaseInOneFileIsDroppedNamingBothLines) {
  const fs::path file = write_three();
  std::string text = slurp(file);
  const std::size_t line2 = text.find('\n') + 1;
  const std::string second_line = text.substr(line2, text.find('\n', line2) + 1 - line2);
  spit(file, text + second_line);  // line 5 repeats line 2
  const LoadedRun r = read_results(file);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.case_lines, (std::vector<std::size_t>{2, 3, 4}));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find(file.string() + ":5: case c0ffee1234567890"), std::string::npos)
      << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("repeats line 2"), std::string::npos) << r.warnings[0];

  const ResultSet set = load_result_set({file.string()});
  EXPECT_EQ(set.cases.size(), 3u);
  EXPECT_EQ(set.sources.at(0).cases, 3u);
  EXPECT_EQ(set.warnings.size(), 1u);

  // Across files: the second copy names where the first was read.
  const fs::path other = m_dir / "other.jsonl";
  spit(other, text.substr(0, line2) + second_line);
  const ResultSet both = load_result_set({file.string(), other.string()});
  EXPECT_EQ(both.cases.size(), 3u);
  ASSERT_EQ(both.sources.size(), 2u);
  EXPECT_EQ(both.sources[1].cases, 0u);
  ASSERT_EQ(both.warnings.size(), 2u);
  EXPECT_NE(both.warnings[1].find(other.string() + ":2: case c0ffee1234567890"), std::string::npos)
      << both.warnings[1];
  EXPECT_NE(both.warnings[1].find("already in " + file.string() + ":2"), std::string::npos)
      << both.warnings[1];
}

// Issue 24 item 8: impossible sizes in a results line were accepted, and --resume then counted the
// case as done. The line is skipped with a warning naming it.
TEST_F(JsonlStore, ImpossibleSizesInACaseLineAreSkippedNamingTheLine) {
  const fs::path file = write_three();
  std::string text = slurp(file);
  const std::size_t line2 = text.find('\n') + 1;
  std::string bad = text.substr(line2, text.find('\n', line2) + 1 - line2);
  const std::size_t at = bad.find("\"seq_q\":");
  ASSERT_NE(at, std::string::npos) << bad;
  bad.replace(at, bad.find(',', at) - at, "\"seq_q\":-5");
  std::string zero = bad;
  zero.replace(zero.find("\"seq_q\":-5"), 10, "\"seq_q\":64");
  const std::size_t hd = zero.find("\"head_dim\":");
  zero.replace(hd, zero.find(',', hd) - hd, "\"head_dim\":0");
  spit(file, text.substr(0, line2) + bad + text.substr(line2) + zero);
  const LoadedRun r = read_results(file);
  EXPECT_EQ(r.cases.size(), 3u);
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find(file.string() + ":2: case c0ffee1234567890"), std::string::npos)
      << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("seq_q = -5: must be >= 1; line skipped"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[1].find(":6: "), std::string::npos) << r.warnings[1];
  EXPECT_NE(r.warnings[1].find("head_dim = 0"), std::string::npos) << r.warnings[1];
  EXPECT_EQ(r.case_lines, (std::vector<std::size_t>{3, 4, 5}));
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// The end of a run rewrites the run record with the devices that took part and the totals; the
// case lines stay byte for byte, and a failed rewrite leaves the old file whole.
TEST_F(JsonlStore, RewritingTheRunRecordKeepsEveryCaseLine) {
  const fs::path file = write_three();
  const std::string before = slurp(file);
  RunInfo run = read_results(file).run;
  RunDevice d;
  d.host = "gpu7";
  d.index = 1;
  d.uuid = "GPU-0123";
  d.name = "NVIDIA H100 80GB HBM3";
  d.peaks.tensor_tflops_measured = 755.5;
  run.devices = {d};
  RunTotals t;
  t.wall_s = 12.5;
  t.cases = 3;
  t.phases.timed_s = 4.25;
  t.idle_s = 0.5;
  t.slots = 2;
  run.totals = t;
  rewrite_run_record(file, run);
  const std::string after = slurp(file);
  EXPECT_EQ(after.substr(after.find('\n')), before.substr(before.find('\n')));
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
  const LoadedRun r = read_results(file);
  ASSERT_EQ(r.cases.size(), 3u);
  ASSERT_EQ(r.run.devices.size(), 1u);
  EXPECT_EQ(r.run.devices[0].uuid, "GPU-0123");
  EXPECT_EQ(r.run.devices[0].index, 1);
  EXPECT_EQ(r.run.devices[0].peaks.tensor_tflops_measured, 755.5);
  ASSERT_TRUE(r.run.totals);
  EXPECT_EQ(r.run.totals->cases, 3);
  EXPECT_EQ(r.run.totals->phases.timed_s, 4.25);
  EXPECT_FALSE(r.run.totals->phases.metrics_s);
  EXPECT_EQ(r.run.totals->slots, 2);

  spit(file, "not json\n" + after.substr(after.find('\n') + 1));
  EXPECT_ANY_THROW(rewrite_run_record(file, run));
  EXPECT_EQ(slurp(file).substr(0, 9), "not json\n");
}

}  // namespace
}  // namespace attn
