// Helpers shared by the report, compare and crossover tests: results files written by the real
// JsonlWriter into a fresh temporary directory, and the attnscope executable run as a process.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "reports/jsonl_store.hpp"
#include "tests/support/cli_process.hpp"

namespace attn::test {

// A fresh directory per test, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = std::filesystem::temp_directory_path() / ("attnscope-" + std::string(info->test_suite_name()) +
                                                      "-" + info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(m_dir);
    std::filesystem::create_directories(m_dir);
  }
  void TearDown() override { std::filesystem::remove_all(m_dir); }

  std::filesystem::path write_run(const std::string& name, const RunInfo& run,
                                  const std::vector<CaseResult>& cases) {
    const std::filesystem::path file = m_dir / name / "results.jsonl";
    JsonlWriter w = JsonlWriter::create(file, run, true);
    for (const CaseResult& c : cases) w.append(c);
    w.close();
    return file.parent_path();
  }

  static std::string slurp(const std::filesystem::path& f) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::filesystem::path m_dir;
};

}  // namespace attn::test
