// NSA's selected branch (Problem::Select): the deterministic draw, its index tensor, the closed-form
// pair count against brute force, validation, labels, the oracle's masking and the capability gate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/problem.hpp"
#include "kernels/api/selected_blocks.hpp"
#include "kernels/cpu/cpu_reference.hpp"
#include "kernels/reference/device_mask.hpp"

namespace attn {
namespace {

Problem selected(std::int64_t s, std::int64_t l, std::int64_t n, std::uint64_t seed = 0) {
  Problem p;
  p.seq_q = p.seq_kv = s;
  p.select = {l, n, seed};
  return p;
}

// Pairs of one (batch, KV head) from the index tensor alone: key j is visible to row i iff j <= i
// and block j / l' is one of the row's query block's entries.
std::int64_t table_pairs(const Problem& p, const std::vector<std::int32_t>& table, std::int64_t b,
                         std::int64_t g) {
  const std::int64_t l = p.select.block, n = p.select.count, nqb = p.select.query_blocks(p.seq_q);
  std::int64_t pairs = 0;
  for (std::int64_t i = 0; i < p.seq_q; ++i) {
    const std::int32_t* row = table.data() + ((b * p.heads_kv + g) * nqb + i / l) * n;
    for (std::int64_t j = 0; j <= i; ++j)
      if (std::find(row, row + n, static_cast<std::int32_t>(j / l)) != row + n) ++pairs;
  }
  return pairs;
}

TEST(SelectedBranch, DrawHasTheDiagonalBlockZeroAndDistinctCausalBlocks) {
  const Problem p = selected(64 * 200, 64, 16, 3);
  for (std::int64_t qb = 0; qb < 200; ++qb) {
    const std::vector<std::int64_t> s = selected_blocks(p, 1, 2, qb);
    ASSERT_EQ(std::ssize(s), std::min<std::int64_t>(qb + 1, 16)) << "qb=" << qb;
    ASSERT_TRUE(std::is_sorted(s.begin(), s.end()));
    ASSERT_EQ(std::adjacent_find(s.begin(), s.end()), s.end()) << "duplicate block at qb=" << qb;
    EXPECT_EQ(s.front(), 0);
    EXPECT_EQ(s.back(), qb);
  }
  EXPECT_EQ(selected_blocks(p, 1, 2, 150), selected_blocks(p, 1, 2, 150));  // deterministic
}

TEST(SelectedBranch, DrawDependsOnSeedBatchAndKvHead) {
  const Problem a = selected(64 * 100, 64, 8, 0), b = selected(64 * 100, 64, 8, 1);
  EXPECT_NE(selected_blocks(a, 0, 0, 90), selected_blocks(b, 0, 0, 90));
  EXPECT_NE(selected_blocks(a, 0, 0, 90), selected_blocks(a, 1, 0, 90));
  EXPECT_NE(selected_blocks(a, 0, 0, 90), selected_blocks(a, 0, 1, 90));
}

TEST(SelectedBranch, DrawIsUniformOverTheMiddleBlocks) {
  // n - 2 = 4 of blocks 1..19 for 20000 (b, g) pairs: each block is drawn 4/19 of the time.
  const Problem p = selected(64 * 21, 64, 6, 9);
  std::map<std::int64_t, int> hits;
  constexpr int kDraws = 20000;
  for (int b = 0; b < kDraws; ++b)
    for (const std::int64_t s : selected_blocks(p, b, 0, 20))
      if (s != 0 && s != 20) ++hits[s];
  ASSERT_EQ(hits.size(), 19u);
  const double expected = kDraws * 4.0 / 19.0, sd = std::sqrt(expected * (1 - 4.0 / 19.0));
  for (const auto& [block, count] : hits) EXPECT_NEAR(count, expected, 5 * sd) << "block " << block;
}

TEST(SelectedBranch, SingleAndPairSelectionsKeepTheDiagonalThenBlockZero) {
  EXPECT_EQ(selected_blocks(selected(1000, 16, 1), 0, 0, 9), (std::vector<std::int64_t>{9}));
  EXPECT_EQ(selected_blocks(selected(1000, 16, 2), 0, 0, 9), (std::vector<std::int64_t>{0, 9}));
  EXPECT_EQ(selected_blocks(selected(1000, 16, 2), 0, 0, 0), (std::vector<std::int64_t>{0}));
}

TEST(SelectedBranch, TablePadsShortRowsAndHoldsEachDraw) {
  Problem p = selected(300, 64, 3, 5);  // 5 query blocks, the last of 44 rows
  p.batch = 2;
  p.heads_q = 4;
  p.heads_kv = 2;
  const std::vector<std::int32_t> t = selected_block_table(p);
  ASSERT_EQ(std::ssize(t), selected_table_entries(p));
  ASSERT_EQ(selected_table_entries(p), 2 * 2 * 5 * 3);
  EXPECT_EQ((std::vector<std::int32_t>(t.begin(), t.begin() + 6)),
            (std::vector<std::int32_t>{0, -1, -1, 0, 1, -1}));
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t g = 0; g < 2; ++g)
      for (std::int64_t qb = 0; qb < 5; ++qb) {
        const std::vector<std::int64_t> s = selected_blocks(p, b, g, qb);
        for (std::size_t k = 0; k < 3; ++k)
          EXPECT_EQ(t[static_cast<std::size_t>(((b * 2 + g) * 5 + qb) * 3) + k], k < s.size() ? s[k] : -1);
      }
}

TEST(SelectedBranch, ClosedFormPairsMatchTheIndexTensorOnManyShapes) {
  int checked = 0;
  for (const std::int64_t s : {1, 15, 16, 17, 64, 100, 255, 256, 257, 700})
    for (const std::int64_t l : {1, 16, 32, 64})
      for (const std::int64_t n : {1, 2, 3, 5, 64}) {
        Problem p = selected(s, l, n, static_cast<std::uint64_t>(s + l + n));
        p.batch = 2;
        p.heads_q = p.heads_kv = 2;
        ASSERT_EQ(p.validate(), "");
        const std::vector<std::int32_t> t = selected_block_table(p);
        for (std::int64_t b = 0; b < 2; ++b)
          for (std::int64_t g = 0; g < 2; ++g)
            ASSERT_EQ(p.visible_pairs_per_head(), table_pairs(p, t, b, g))
                << "s=" << s << " l'=" << l << " n=" << n << " b=" << b << " g=" << g;
        ++checked;
      }
  EXPECT_EQ(checked, 10 * 4 * 5);
}

TEST(SelectedBranch, HugeSizesAnswerAtOnceAndFlopsCountSelectedPairs) {
  Problem p = selected(std::int64_t{1} << 30, 64, 16);
  // Rows of the first 16 blocks: causal; the rest: 15 whole blocks plus their own triangle.
  const std::int64_t dense = 16 * 64, rest = p.seq_q - dense;
  EXPECT_EQ(p.visible_pairs_per_head(), dense * (dense + 1) / 2 + rest * 15 * 64 + rest / 64 * (64 * 65 / 2));
  p = selected(8192, 64, 16);
  p.batch = 2;
  p.heads_q = 8;
  p.heads_kv = 2;
  p.head_dim = p.head_dim_v = 128;
  Problem causal = p;
  causal.select = {};
  causal.causal = true;
  // 16 of 128 blocks: rows past the first 1024 see ~1000 keys, not ~4096 on average.
  EXPECT_EQ(p.visible_pairs_per_head(), 1024 * 1025 / 2 + 7168 * 15 * 64 + 112 * (64 * 65 / 2));
  EXPECT_LT(p.forward_flops(), causal.forward_flops() / 4);
  EXPECT_DOUBLE_EQ(p.forward_flops(), 2.0 * 2 * 8 * 256 * static_cast<double>(p.visible_pairs_per_head()));
  // n at least the query blocks: every causal pair.
  EXPECT_EQ(selected(1000, 64, 16).visible_pairs_per_head(), 1000 * 1001 / 2);
}

TEST(SelectedBranch, ValidationNamesTheFieldAndWhatIsAllowed) {
  Problem p = selected(256, 64, 4);
  EXPECT_EQ(p.validate(), "");
  p.causal = true;
  EXPECT_NE(p.validate().find("its own causal rule; set causal = 0"), std::string::npos) << p.validate();
  p.causal = false;
  p.window = {32, 0};
  EXPECT_NE(p.validate().find("window = (32,0)"), std::string::npos) << p.validate();
  p.window = {};
  p.seq_kv = 128;
  EXPECT_NE(p.validate().find("make seq_kv = seq_q"), std::string::npos) << p.validate();
  p.seq_kv = 256;
  p.compress = {32, 16};
  EXPECT_NE(p.validate().find("one NSA branch"), std::string::npos) << p.validate();
  p.compress = {};
  p.varlen.q = p.varlen.kv = {256};
  EXPECT_NE(p.validate().find("variable-length batch is not supported yet"), std::string::npos)
      << p.validate();
  p.varlen = {};
  p.select.count = 0;
  EXPECT_EQ(p.validate(),
            "select = (64,0): block l' and count n must both be >= 1 (or both 0: no selected branch)");
}

TEST(SelectedBranch, LabelsNameBlockCountAndANonZeroSeed) {
  EXPECT_EQ(selected(256, 64, 16).mask_label(), "sel64x16");
  EXPECT_EQ(selected(256, 64, 16, 7).mask_label(), "sel64x16s7");
  EXPECT_NE(selected(256, 64, 16).full_label().find("sel64x16"), std::string::npos);
}

TEST(SelectedBranch, DeviceMaskAgreesWithTheDrawOnHost) {
  Problem p = selected(300, 32, 4, 11);
  p.heads_q = 4;
  p.heads_kv = 2;
  const std::vector<std::int32_t> t = selected_block_table(p);
  DeviceMask m = make_device_mask(p);
  m.sel = t.data();
  for (std::int64_t g = 0; g < 2; ++g)
    for (std::int64_t i = 0; i < p.seq_q; ++i) {
      const std::vector<std::int64_t> s = selected_blocks(p, 0, g, i / 32);
      for (std::int64_t j = 0; j < p.seq_kv; ++j)
        ASSERT_EQ(m.visible(i, j) && m.selected(0, g, i, j), selected_visible(p, s, i, j))
            << "g=" << g << " i=" << i << " j=" << j;
    }
}

TEST(SelectedBranch, OracleAveragesOnlyTheSelectedKeys) {
  // V = the key's index: each row's output is the softmax-weighted mean of its visible keys'
  // indices; with Q = 0 every visible key weighs the same, so O is their plain mean.
  Problem p = selected(200, 16, 3, 4);
  p.heads_q = 2;
  p.heads_kv = 1;
  p.head_dim = p.head_dim_v = 4;
  p.dtype = DType::fp32;
  std::vector<float> q(static_cast<std::size_t>(p.q_elems()), 0.0f),
      k(static_cast<std::size_t>(p.k_elems()), 1.0f), v(static_cast<std::size_t>(p.v_elems()));
  for (std::int64_t j = 0; j < p.seq_kv; ++j)
    for (std::int64_t d = 0; d < 4; ++d) v[static_cast<std::size_t>(j * 4 + d)] = static_cast<float>(j);
  std::vector<double> o(static_cast<std::size_t>(p.o_elems())), lse(static_cast<std::size_t>(p.lse_elems()));
  cpu_reference_attention(p, q.data(), k.data(), v.data(), 1.0, o.data(), lse.data());
  for (std::int64_t i = 0; i < p.seq_q; ++i) {
    const std::vector<std::int64_t> s = selected_blocks(p, 0, 0, i / 16);
    double sum = 0;
    std::int64_t count = 0;
    for (std::int64_t j = 0; j <= i; ++j)
      if (std::find(s.begin(), s.end(), j / 16) != s.end()) sum += static_cast<double>(j), ++count;
    for (std::int64_t h = 0; h < 2; ++h) {
      ASSERT_NEAR(o[static_cast<std::size_t>((i * 2 + h) * 4)], sum / static_cast<double>(count), 1e-9)
          << "i=" << i;
      ASSERT_NEAR(lse[static_cast<std::size_t>(h * p.seq_q + i)], std::log(static_cast<double>(count)),
                  1e-12);
    }
  }
  // The row form over a slice (one head of KV head 0) agrees, given where the slice starts.
  std::vector<RowIndex> rows{{0, 0, 199}, {0, 1, 57}};
  std::vector<double> o_rows(rows.size() * 4);
  cpu_reference_rows(p, q.data(), k.data(), v.data(), 1.0, rows, o_rows.data(), nullptr,
                     SliceOrigin{&p, 0, 0});
  EXPECT_DOUBLE_EQ(o_rows[0], o[static_cast<std::size_t>((199 * 2 + 0) * 4)]);
  EXPECT_DOUBLE_EQ(o_rows[4], o[static_cast<std::size_t>((57 * 2 + 1) * 4)]);
}

TEST(SelectedBranch, KernelsWithoutTheCapabilityRefuseAndNoBackwardRuns) {
  KernelSpec k;
  k.id = "plugin.dense";
  k.why_not = [](const Problem&, const Knobs&) { return std::string{}; };
  k.backward_why_not = k.why_not;
  Problem p = selected(256, 64, 4);
  EXPECT_EQ(
      kernel_why_not(k, p, {}),
      "plugin.dense does not implement NSA's selected branch (select = 64,4); `attnscope kernels` marks "
      "those that do in its sel column");
  k.selected_branch = true;
  EXPECT_EQ(kernel_why_not(k, p, {}), "");
  p.pass = Pass::bwd;
  EXPECT_NE(backward_why_not(k, p, {}).find("measured forward only"), std::string::npos);
}

TEST(SelectedBranch, TableSizeLimitNamesTheEntries) {
  Problem p = selected(1 << 20, 16, 64);
  p.heads_q = p.heads_kv = 64;
  const std::string why = selected_table_why_not(p, "fa2.mma", std::int64_t{1} << 20);
  EXPECT_NE(why.find("has 268435456 entries; fa2.mma takes at most 1048576"), std::string::npos) << why;
  EXPECT_EQ(selected_table_why_not(selected(4096, 64, 16), "fa2.mma", 1 << 20), "");
}

}  // namespace
}  // namespace attn
