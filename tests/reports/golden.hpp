// Golden-file comparison for pinned output formats (tests/golden/). Run the tests with
// ATTNSCOPE_UPDATE_GOLDEN=1 to rewrite the files after an intended format change, then review
// the diff; without it a mismatch fails and prints both texts.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/test_paths.hpp"
namespace attn::test {

inline void expect_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path file = std::filesystem::path(attn::test::source_dir()) / "tests" / "golden" / name;
  if (const char* update = std::getenv("ATTNSCOPE_UPDATE_GOLDEN");
      update != nullptr && std::string(update) == "1") {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << actual;
  }
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(in.good()) << file << " is missing (ATTNSCOPE_UPDATE_GOLDEN=1 writes it)";
  std::ostringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "golden " << file << " differs";
}

}  // namespace attn::test
