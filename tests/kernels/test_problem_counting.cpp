// Exact (query, key) pair counts and FLOP/byte counting of Problem for every mask kind.
#include <gtest/gtest.h>

#include "kernels/api/problem.hpp"

namespace attn {
namespace {

Problem square(std::int64_t s) {
  Problem p;
  p.seq_q = p.seq_kv = s;
  return p;
}

std::int64_t brute_force_pairs(const Problem& p) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < p.seq_q; ++i) {
    const std::int64_t diag = i + p.seq_kv - p.seq_q;
    for (std::int64_t j = 0; j < p.seq_kv; ++j) {
      bool ok = true;
      if (p.causal && j > diag) ok = false;
      if (p.window.left >= 0 && j < diag - p.window.left) ok = false;
      if (p.window.right >= 0 && j > diag + p.window.right) ok = false;
      n += ok ? 1 : 0;
    }
  }
  return n;
}

TEST(ProblemCounting, FullSquareCountsEveryPair) { EXPECT_EQ(square(7).visible_pairs_per_head(), 49); }

TEST(ProblemCounting, CausalSquareIsTriangle) {
  Problem p = square(1000);
  p.causal = true;
  EXPECT_EQ(p.visible_pairs_per_head(), 1000 * 1001 / 2);
}

TEST(ProblemCounting, CausalBottomRightWhenKeysOutnumberQueries) {
  Problem p;
  p.seq_q = 3;
  p.seq_kv = 5;
  p.causal = true;  // rows see 3, 4, 5 keys
  EXPECT_EQ(p.visible_pairs_per_head(), 12);
  EXPECT_TRUE(p.visible(0, 2));
  EXPECT_FALSE(p.visible(0, 3));
}

TEST(ProblemCounting, CausalBottomRightWhenQueriesOutnumberKeys) {
  Problem p;
  p.seq_q = 5;
  p.seq_kv = 3;
  p.causal = true;  // the first two rows see nothing, then 1, 2, 3
  EXPECT_EQ(p.visible_pairs_per_head(), 6);
  EXPECT_EQ(p.visible_keys(0).size(), 0);
  EXPECT_EQ(p.visible_keys(1).size(), 0);
  EXPECT_EQ(p.visible_keys(4).size(), 3);
}

TEST(ProblemCounting, SlidingWindowLeftOnly) {
  Problem p = square(5);
  p.window = {2, 0};  // [i-2, i]: 1, 2, 3, 3, 3
  EXPECT_EQ(p.visible_pairs_per_head(), 12);
}

TEST(ProblemCounting, SymmetricWindow) {
  Problem p = square(4);
  p.window = {1, 1};  // [i-1, i+1]: 2, 3, 3, 2
  EXPECT_EQ(p.visible_pairs_per_head(), 10);
}

TEST(ProblemCounting, CausalWithLeftWindow) {
  Problem p = square(4);
  p.causal = true;
  p.window = {1, -1};  // [i-1, i]: 1, 2, 2, 2
  EXPECT_EQ(p.visible_pairs_per_head(), 7);
}

TEST(ProblemCounting, MatchesBruteForceOnOddShapes) {
  for (std::int64_t sq : {1, 17, 63}) {
    for (std::int64_t sk : {1, 17, 100}) {
      for (bool causal : {false, true}) {
        for (Window w : {Window{}, Window{5, 0}, Window{3, 7}, Window{-1, 2}, Window{0, 0}}) {
          Problem p;
          p.seq_q = sq;
          p.seq_kv = sk;
          p.causal = causal;
          p.window = w;
          EXPECT_EQ(p.visible_pairs_per_head(), brute_force_pairs(p))
              << "sq=" << sq << " sk=" << sk << " causal=" << causal << " window=" << w.left << ","
              << w.right;
        }
      }
    }
  }
}

TEST(ProblemCounting, FlopsFollowDesignFormula) {
  Problem p;
  p.batch = 2;
  p.heads_q = 16;
  p.heads_kv = 4;
  p.seq_q = p.seq_kv = 8192;
  p.head_dim = p.head_dim_v = 128;
  EXPECT_DOUBLE_EQ(p.flops(), 4.0 * 2 * 16 * 8192.0 * 8192.0 * 128);
  p.causal = true;  // the usual 4BHS^2D/2, up to (S+1)/S
  EXPECT_DOUBLE_EQ(p.flops(), 4.0 * 2 * 16 * 8192.0 * 8192.0 * 128 / 2 * (8193.0 / 8192.0));
  p.causal = false;
  p.head_dim_v = 64;  // 2 * B * Hq * (D + Dv) * P
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 2 * 16 * (128 + 64) * 8192.0 * 8192.0);
}

TEST(ProblemCounting, MinBytesCountsEachTensorOnce) {
  Problem p;
  p.batch = 2;
  p.heads_q = 8;
  p.heads_kv = 2;
  p.seq_q = 100;
  p.seq_kv = 300;
  p.head_dim = 64;
  p.head_dim_v = 32;
  p.dtype = DType::bf16;
  const std::int64_t q = 2 * 100 * 8 * 64, k = 2 * 300 * 2 * 64, v = 2 * 300 * 2 * 32, o = 2 * 100 * 8 * 32;
  EXPECT_EQ(p.min_bytes(false), (q + k + v + o) * 2);
  EXPECT_EQ(p.min_bytes(true), (q + k + v + o) * 2 + 2 * 8 * 100 * 4);
}

TEST(ProblemValidation, NamesTheFieldAndValue) {
  Problem p;
  p.heads_q = 6;
  p.heads_kv = 4;
  EXPECT_NE(p.validate().find("heads_kv = 4"), std::string::npos);
  p.heads_kv = 3;
  EXPECT_EQ(p.validate(), "");
  p.seq_q = 0;
  EXPECT_NE(p.validate().find("seq_q = 0"), std::string::npos);
}

TEST(ProblemLabels, ShapeAndMask) {
  Problem p;
  p.batch = 2;
  p.heads_q = 16;
  p.seq_q = p.seq_kv = 8192;
  p.head_dim = p.head_dim_v = 128;
  EXPECT_EQ(p.shape_label(), "2x16x8192x128");
  EXPECT_EQ(p.mask_label(), "full");
  p.causal = true;
  p.window = {128, 0};
  EXPECT_EQ(p.mask_label(), "causal+win128,0");
}

}  // namespace
}  // namespace attn
