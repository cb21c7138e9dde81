// Exact (query, key) pair counts and FLOP/byte counting of Problem for every mask kind.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/api/problem.hpp"
#include "kernels/reference/device_mask.hpp"

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

// The per-row loop that visible_pairs_per_head() used to be: the closed form must agree with it.
std::int64_t row_loop_pairs(const Problem& p) {
  std::int64_t pairs = 0;
  for (std::int64_t i = 0; i < p.seq_q; ++i) pairs += p.visible_keys(i).size();
  return pairs;
}

// Issue 24 item 5: the count was a loop over rows (seq = 2^40 spun for hours). Every mask kind,
// both alignments (Sq < Sk, Sq > Sk) and windows wider and narrower than the sequence.
TEST(ProblemCounting, ClosedFormMatchesTheRowLoopOnManySmallShapes) {
  const std::int64_t sizes[] = {1, 2, 3, 5, 8, 13, 31, 64};
  const std::int64_t sides[] = {-1, 0, 1, 2, 7, 40, 100};
  int checked = 0;
  for (const std::int64_t sq : sizes)
    for (const std::int64_t sk : sizes)
      for (const bool causal : {false, true})
        for (const std::int64_t left : sides)
          for (const std::int64_t right : sides) {
            Problem p;
            p.seq_q = sq;
            p.seq_kv = sk;
            p.causal = causal;
            p.window = {left, right};
            ASSERT_EQ(p.visible_pairs_per_head(), row_loop_pairs(p))
                << "sq=" << sq << " sk=" << sk << " causal=" << causal << " window=" << left << "," << right;
            ++checked;
          }
  EXPECT_EQ(checked, 8 * 8 * 2 * 7 * 7);
}

// The device mask's per-element test is the host's band, on both alignments and every window.
TEST(ProblemCounting, DeviceMaskVisibleIsTheBand) {
  const std::int64_t sides[] = {-1, 0, 1, 7, 40};
  for (const std::int64_t sq : {1, 5, 31, 64})
    for (const std::int64_t sk : {1, 8, 31, 64})
      for (const bool causal : {false, true})
        for (const std::int64_t left : sides)
          for (const std::int64_t right : sides) {
            Problem p;
            p.seq_q = sq;
            p.seq_kv = sk;
            p.causal = causal;
            p.window = {left, right};
            const DeviceMask m = make_device_mask(p);
            for (std::int64_t i = 0; i < sq; ++i) {
              const Problem::KeyRange r = p.visible_keys(i);
              EXPECT_EQ(m.first(i), r.first);
              EXPECT_EQ(m.last(i), std::max(r.first, r.last));
              for (std::int64_t j = -1; j <= sk; ++j)
                ASSERT_EQ(m.visible(i, j), p.visible(i, j))
                    << "sq=" << sq << " sk=" << sk << " causal=" << causal << " window=" << left << ","
                    << right << " i=" << i << " j=" << j;
            }
          }
}

TEST(ProblemCounting, HugeSizesAnswerAtOnce) {
  const std::int64_t s = std::int64_t{1} << 40;
  Problem p;
  p.seq_q = p.seq_kv = s;
  p.causal = true;
  p.window = {64, 0};  // rows 0..63 see i + 1 keys, every later row 65
  EXPECT_EQ(p.visible_pairs_per_head(), 64 * 65 / 2 + (s - 64) * 65);
  p.window = {};
  p.seq_q = 3;  // bottom-right causal with Sk = 2^40: rows see Sk - 2, Sk - 1, Sk keys
  EXPECT_EQ(p.visible_pairs_per_head(), 3 * s - 3);
  // 2^80 pairs: the count saturates, flops stay exact in double.
  p.seq_q = s;
  p.causal = false;
  EXPECT_EQ(p.visible_pairs_per_head(), std::numeric_limits<std::int64_t>::max());
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 128 * std::ldexp(1.0, 80));
  p.seq_q = p.seq_kv = std::numeric_limits<std::int64_t>::max();
  p.causal = true;
  p.window = {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max()};
  EXPECT_GT(p.flops(), 1e38);
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
  // The backward reads Q, K, V, O, dO and LSE once and writes dQ, dK, dV once; fwd+bwd adds the
  // forward with its LSE written.
  const std::int64_t lse = 2 * 8 * 100 * 4;
  const std::int64_t backward = (q + k + v + o + o) * 2 + lse + (q + k + v) * 2;
  p.pass = Pass::bwd;
  EXPECT_EQ(p.min_bytes(false), backward);
  p.pass = Pass::fwd_bwd;
  EXPECT_EQ(p.min_bytes(false), (q + k + v + o) * 2 + lse + backward);
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

// NSA's compressed branch straight from the paper's rule: query t sees block j iff j*d + l - 1 <= t.
std::int64_t brute_force_compressed_pairs(const Problem& p) {
  std::int64_t n = 0;
  for (std::int64_t t = 0; t < p.seq_q; ++t)
    for (std::int64_t j = 0; j < p.seq_kv; ++j)
      n += j * p.compress.stride + p.compress.block - 1 <= t ? 1 : 0;
  return n;
}

TEST(CompressedBranch, BlocksAtFollowsNumCmp) {
  const Compress c{32, 16};  // num_cmp(t) = floor((t + 1 - 32) / 16) + 1
  EXPECT_EQ(c.blocks_at(0), 0);
  EXPECT_EQ(c.blocks_at(30), 0);
  EXPECT_EQ(c.blocks_at(31), 1);
  EXPECT_EQ(c.blocks_at(46), 1);
  EXPECT_EQ(c.blocks_at(47), 2);
  EXPECT_EQ(c.blocks_at(255), 15);
}

TEST(CompressedBranch, PairsAndMaskMatchThePapersRuleOnManyShapes) {
  int checked = 0;
  for (const std::int64_t sq : {1, 2, 7, 16, 31, 32, 33, 100, 257})
    for (const std::int64_t l : {1, 2, 8, 16, 32})
      for (const std::int64_t d : {1, 3, 8, 16, 32})
        for (const std::int64_t extra : {-3, 0, 5}) {  // Sk below, at and past the sequence's blocks
          Problem p;
          p.seq_q = sq;
          p.compress = {l, d};
          p.seq_kv = std::max<std::int64_t>(1, p.compress.blocks_at(sq - 1) + extra);
          ASSERT_EQ(p.validate(), "");
          ASSERT_EQ(p.visible_pairs_per_head(), brute_force_compressed_pairs(p))
              << "sq=" << sq << " sk=" << p.seq_kv << " l=" << l << " d=" << d;
          const DeviceMask m = make_device_mask(p);
          for (std::int64_t i = 0; i < sq; ++i)
            for (std::int64_t j = 0; j < p.seq_kv; ++j)
              ASSERT_EQ(m.visible(i, j), j * d + l - 1 <= i)
                  << "i=" << i << " j=" << j << " l=" << l << " d=" << d;
          ++checked;
        }
  EXPECT_EQ(checked, 9 * 5 * 5 * 3);
}

TEST(CompressedBranch, HugeSizesAnswerAtOnceAndFlopsCountVisiblePairs) {
  Problem p;
  p.seq_q = std::int64_t{1} << 30;
  p.compress = {32, 16};
  p.seq_kv = p.compress.blocks_at(p.seq_q - 1);
  const std::int64_t k = p.seq_kv;  // rows 31.. see 1, 1, ..., each count 16 times, the last partly
  const std::int64_t last_rows = p.seq_q - 31 - (k - 1) * 16;
  EXPECT_EQ(p.visible_pairs_per_head(), 16 * (k - 1) * k / 2 + last_rows * k);
  p.seq_q = 1024;
  p.seq_kv = p.compress.blocks_at(1023);  // 63 blocks
  p.batch = 2;
  p.heads_q = p.heads_kv = 4;
  p.head_dim = p.head_dim_v = 64;
  EXPECT_EQ(p.seq_kv, 63);
  EXPECT_DOUBLE_EQ(p.forward_flops(),
                   2.0 * 2 * 4 * 128 * static_cast<double>(brute_force_compressed_pairs(p)));
}

TEST(CompressedBranch, ValidationNamesTheFieldAndWhatIsAllowed) {
  Problem p;
  p.seq_q = 256;
  p.seq_kv = 15;
  p.compress = {32, 0};
  EXPECT_EQ(p.validate(),
            "compress = (32,0): block l and stride d must both be >= 1 (or both 0: no compressed branch)");
  p.compress = {32, 16};
  EXPECT_EQ(p.validate(), "");
  p.causal = true;
  EXPECT_EQ(
      p.validate(),
      "compress = (32,16) with causal = 1: the compressed branch is its own causal rule; set causal = 0 and "
      "no window");
  p.causal = false;
  p.window = {64, 0};
  EXPECT_NE(p.validate().find("with window = (64,0)"), std::string::npos);
  p.window = {};
  EXPECT_EQ(p.mask_label(), "cmp32,16");
  EXPECT_EQ(p.full_label(), "B=1 Hq=1 Sq=256 Sk=15 D=64 fp16 cmp32,16");
}

}  // namespace
}  // namespace attn
