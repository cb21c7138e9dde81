// Axis syntax: lists, ranges, geometric ranges, dtypes, booleans, windows, and their errors.
#include <gtest/gtest.h>

#include "profiling/sweep/axis_parse.hpp"
#include "tests/support/spec_error.hpp"

namespace attn {
namespace {

using I = std::vector<std::int64_t>;

// The message of the SpecError that `f` throws; fails the test when it throws nothing.
using test::error_of;

TEST(AxisParse, IntList) {
  EXPECT_EQ(parse_int_axis("1,2,4", "batch"), (I{1, 2, 4}));
  EXPECT_EQ(parse_int_axis(" 64 , 128 ", "head_dim"), (I{64, 128}));
  EXPECT_EQ(parse_int_axis("7", "batch"), (I{7}));
}

TEST(AxisParse, IntRangeInclusiveStop) {
  EXPECT_EQ(parse_int_axis("320:1024:64", "head_dim"),
            (I{320, 384, 448, 512, 576, 640, 704, 768, 832, 896, 960, 1024}));
  // A stop off the grid ends at the last value below it.
  EXPECT_EQ(parse_int_axis("1:10:4", "seq"), (I{1, 5, 9}));
  EXPECT_EQ(parse_int_axis("8:8:1", "seq"), (I{8}));
}

TEST(AxisParse, GeometricRange) {
  EXPECT_EQ(parse_int_axis("512:16384:x2", "seq"), (I{512, 1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(parse_int_axis("1:100:x10", "seq"), (I{1, 10, 100}));
  EXPECT_EQ(parse_int_axis("3:30:X3", "seq"), (I{3, 9, 27}));
}

TEST(AxisParse, Mixture) {
  EXPECT_EQ(parse_int_axis("64,128,320:448:64,1024:4096:x2", "head_dim"),
            (I{64, 128, 320, 384, 448, 1024, 2048, 4096}));
}

TEST(AxisParse, IntErrorsNameFieldValueAndAllowed) {
  const std::string e = error_of([] { parse_int_axis("64,abc", "sweep.head_dim"); });
  EXPECT_EQ(
      e,
      "field 'sweep.head_dim' = '64,abc': 'abc' is not an integer; allowed: a list like 64,128 or a range "
      "like 320:1024:64 (start:stop:step, stop inclusive) or 512:16384:x2 (geometric), values >= 1");
  const std::string f = error_of([] { parse_int_axis("64,abc", "--head-dim"); });
  EXPECT_EQ(
      f.rfind("--head-dim '64,abc': 'abc' is not an integer; expected a list like 64,128 or a range like "
              "320:1024:64",
              0),
      0u)
      << f;
}

TEST(AxisParse, IntErrorCases) {
  struct Bad {
    const char* text;
    const char* what;
  };
  const Bad bad[] = {
      {"", "no values"},
      {"64,,128", "empty item in the list"},
      {"0", "0 is below 1"},
      {"-4", "-4 is below 1"},
      {"1.5", "'1.5' is not an integer"},
      {"320:1024", "'320:1024' is not a range: a range has three parts start:stop:step"},
      {"1024:320:64", "range '1024:320:64': stop 320 is below start 1024"},
      {"320:1024:0", "range '320:1024:0': step 0 must be >= 1"},
      {"512:16384:x1", "range '512:16384:x1': factor x1 must be >= 2"},
      {"a:8:1", "range 'a:8:1': start 'a' is not an integer"},
      {"1:b:1", "range '1:b:1': stop 'b' is not an integer"},
      {"1:8:y2", "range '1:8:y2': step 'y2' is not an integer or xK"},
      {"0:8:1", "range '0:8:1': start must be >= 1"},
      {"1:100000:1", "range '1:100000:1' expands to more than 4096 values"},
      // Issue 24 item 5: an overflowing number says so rather than "not an integer".
      {"99999999999999999999", "'99999999999999999999' is too large (at most 9223372036854775807)"},
      {"1:99999999999999999999:x2",
       "range '1:99999999999999999999:x2': stop '99999999999999999999' is too large (at most "
       "9223372036854775807)"},
  };
  for (const Bad& b : bad) {
    const std::string e = error_of([&] { parse_int_axis(b.text, "seq"); });
    EXPECT_NE(e.find("field 'seq' = '" + std::string(b.text) + "': " + b.what + "; allowed: "),
              std::string::npos)
        << b.text << " -> " << e;
  }
}

TEST(AxisParse, GeometricRangeDoesNotOverflow) {
  const I v = parse_int_axis("1:9223372036854775807:x2", "seq");
  ASSERT_EQ(v.size(), 63u);
  EXPECT_EQ(v.back(), std::int64_t{1} << 62);
}

TEST(AxisParse, DTypes) {
  EXPECT_EQ(parse_dtype_axis("fp16,bf16,fp32", "dtype"),
            (std::vector<DType>{DType::fp16, DType::bf16, DType::fp32}));
  EXPECT_EQ(parse_dtype_axis("Half, bfloat16", "dtype"), (std::vector<DType>{DType::fp16, DType::bf16}));
  EXPECT_EQ(error_of([] { parse_dtype_axis("fp16,fp8", "--dtype"); }),
            "--dtype 'fp16,fp8': 'fp8' is not a dtype; expected a list of fp16, bf16, fp32 like fp16,bf16");
}

TEST(AxisParse, Bools) {
  EXPECT_EQ(parse_bool_axis("0,1", "causal"), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_bool_axis("true, FALSE", "causal"), (std::vector<int>{1, 0}));
  EXPECT_EQ(error_of([] { parse_bool_axis("2", "--causal"); }),
            "--causal '2': '2' is not 0 or 1; expected a list of 0, 1 (or true, false) like 0,1");
}

TEST(AxisParse, Windows) {
  EXPECT_EQ(parse_window_axis("64,0", "window"), (std::vector<Window>{{64, 0}}));
  EXPECT_EQ(parse_window_axis("64,0;128,128", "window"), (std::vector<Window>{{64, 0}, {128, 128}}));
  // A single L is a causal sliding window (L, 0); none and -1,-1 are no window.
  EXPECT_EQ(parse_window_axis("256", "window"), (std::vector<Window>{{256, 0}}));
  EXPECT_EQ(parse_window_axis("none;-1,-1;-1", "window"), (std::vector<Window>{{}, {}, {}}));
  EXPECT_FALSE(parse_window_axis("none", "window")[0].active());
  EXPECT_EQ(parse_window_axis("-1,16", "window"), (std::vector<Window>{{-1, 16}}));
  EXPECT_EQ(
      error_of([] { parse_window_axis("64,0;1,2,3", "--window"); }),
      "--window '64,0;1,2,3': window '1,2,3' has 3 numbers, not 1 or 2; expected windows L,R separated by "
      "';' like 64,0;128,128 (L or R = -1: unbounded on that side; a single L means L,0), or none");
  EXPECT_NE(error_of([] { parse_window_axis("64,-2", "window"); }).find("window '64,-2': -2 is below -1"),
            std::string::npos);
  EXPECT_NE(
      error_of([] { parse_window_axis("64,x", "window"); }).find("window '64,x': 'x' is not an integer"),
      std::string::npos);
  EXPECT_NE(error_of([] { parse_window_axis("64,0;", "window"); }).find("empty window"), std::string::npos);
}

TEST(AxisParse, FormatRoundTrips) {
  const I ints = parse_int_axis("320:1024:64,7", "x");
  EXPECT_EQ(parse_int_axis(format_int_axis(ints), "x"), ints);
  EXPECT_EQ(format_dtype_axis({DType::bf16, DType::fp32}), "bf16,fp32");
  EXPECT_EQ(format_bool_axis({0, 1}), "0,1");
  const auto w = parse_window_axis("64,0;none;-1,32", "w");
  EXPECT_EQ(format_window_axis(w), "64,0;none;-1,32");
  EXPECT_EQ(parse_window_axis(format_window_axis(w), "w"), w);
}

TEST(AxisParse, ScalarValues) {
  EXPECT_EQ(parse_int_value("16384", "--tokens", 1), 16384);
  EXPECT_EQ(error_of([] { parse_int_value("0", "--tokens", 1); }),
            "--tokens '0': 0 is below 1; expected an integer >= 1");
  EXPECT_TRUE(parse_bool_value("1", "--force"));
  EXPECT_FALSE(parse_bool_value("false", "--force"));
  EXPECT_NE(error_of([] { parse_bool_value("0,1", "--force"); }).find("expects one value, got 2"),
            std::string::npos);
}

}  // namespace
}  // namespace attn
