// Dense-bucketed execution of varlen batches (kernels/api/bucketing.hpp): the bucket plan and its
// padding cost, the rules and reasons, the wrapper's output against the packed path (bit-equal for
// the fp64 oracle, whose sums see the same keys in the same order), the execution knob in variants,
// and a bucketed case through the CPU engine with its padding waste recorded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/api/bucketing.hpp"
#include "kernels/api/sequence_views.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/sweep/variant.hpp"
#include "profiling/sweep/varlen_axis.hpp"

namespace attn {
namespace {

Problem varlen_problem(std::vector<std::int64_t> lengths, bool causal, Window w = {}) {
  Problem p;
  p.batch = static_cast<std::int64_t>(lengths.size());
  p.heads_q = 4;
  p.heads_kv = 2;
  p.head_dim = p.head_dim_v = 16;
  p.dtype = DType::fp32;
  p.causal = causal;
  p.window = w;
  p.seq_q = p.seq_kv = *std::max_element(lengths.begin(), lengths.end());
  p.varlen.q = lengths;
  p.varlen.kv = std::move(lengths);
  return p;
}

TEST(Bucketing, BatchesByPaddedLengthShortestFirst) {
  const Problem p = varlen_problem({1, 130, 17, 128, 64, 300}, true);
  const std::vector<DenseBucket> b = dense_buckets(p, 128);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].length, 128);
  EXPECT_EQ(b[0].sequences, (std::vector<std::int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(b[1].length, 256);
  EXPECT_EQ(b[1].sequences, (std::vector<std::int64_t>{1}));
  EXPECT_EQ(b[2].length, 384);
  EXPECT_EQ(b[2].sequences, (std::vector<std::int64_t>{5}));
  const Problem& d = b[0].problem;
  EXPECT_FALSE(d.varlen.active());
  EXPECT_EQ(d.batch, 4);
  EXPECT_EQ(d.seq_q, 128);
  EXPECT_EQ(d.seq_kv, 128);
  EXPECT_TRUE(d.causal);
  EXPECT_EQ(d.heads_q, 4);
  EXPECT_EQ(d.validate(), "");
  // Bucket 1: no padding at all, one batch per distinct length.
  EXPECT_EQ(dense_buckets(p, 1).size(), 6u);
  const PaddingCost none = padding_cost(p, 1);
  EXPECT_EQ(none.launched_rows, none.real_rows);
  EXPECT_DOUBLE_EQ(none.waste(), 0.0);
}

// The one-pass prefix sums the varlen kernels upload (cu_seqlens, ragged offsets) and the bucketed
// wrapper reads: the same rows as Problem::q_start / kv_start, the last one the total.
TEST(Bucketing, SequenceStartsAreTheProblemsRowStarts) {
  const Problem p = varlen_problem({1, 130, 17, 128, 64, 300}, true);
  const std::vector<std::int64_t> starts = sequence_starts(p.varlen.q);
  ASSERT_EQ(starts.size(), 7u);
  for (std::int64_t b = 0; b <= p.batch; ++b)
    EXPECT_EQ(starts[static_cast<std::size_t>(b)], p.q_start(b)) << b;
  EXPECT_EQ(starts.back(), p.total_q());
  const std::vector<std::int32_t> ragged = int32_sequence_starts(p.varlen.q, p.heads_q * p.head_dim);
  EXPECT_EQ(ragged, (std::vector<std::int32_t>{0, 64, 8384, 9472, 17664, 21760, 40960}));
  EXPECT_EQ(sequence_starts({}), (std::vector<std::int64_t>{0}));
}

TEST(Bucketing, PaddingCostCountsCausalPairs) {
  const Problem p = varlen_problem({1, 130, 17, 128, 64, 300}, true);
  const PaddingCost c = padding_cost(p, 128);
  auto tri = [](double n) { return n * (n + 1) / 2; };
  const double real = tri(1) + tri(130) + tri(17) + tri(128) + tri(64) + tri(300);
  const double launched = 4 * tri(128) + tri(256) + tri(384);
  EXPECT_EQ(c.real_rows, 1 + 130 + 17 + 128 + 64 + 300);
  EXPECT_EQ(c.launched_rows, 4 * 128 + 256 + 384);
  EXPECT_DOUBLE_EQ(c.real_pairs, real);
  EXPECT_DOUBLE_EQ(c.launched_pairs, launched);
  EXPECT_NEAR(c.waste(), 1.0 - real / launched, 1e-15);
  EXPECT_GT(c.waste(), 0.3);
}

TEST(Bucketing, RefusesWhatPaddingWouldChangeWithTheReason) {
  EXPECT_EQ(bucketing_why_not(varlen_problem({5, 9}, true), 8), "");
  EXPECT_EQ(bucketing_why_not(varlen_problem({5, 9}, false, {32, 0}), 8), "");
  EXPECT_NE(bucketing_why_not(varlen_problem({5, 9}, false), 8).find("no row sees keys to its right"),
            std::string::npos);
  EXPECT_NE(bucketing_why_not(varlen_problem({5, 9}, false, {4, 4}), 8).find("this problem is win4,4"),
            std::string::npos);
  Problem kv = varlen_problem({5, 9}, true);
  kv.varlen.kv = {7, 9};
  kv.seq_kv = 9;
  EXPECT_NE(bucketing_why_not(kv, 8).find("varlen q = kv lengths"), std::string::npos);
  Problem dense = varlen_problem({5}, true);
  dense.varlen = {};
  EXPECT_NE(bucketing_why_not(dense, 8).find("this problem is dense"), std::string::npos);
  EXPECT_NE(
      bucketing_why_not(varlen_problem({5}, true), kMaxBucket + 1).find("a bucket is 1 to 1048576 rows"),
      std::string::npos);
}

// cpu.reference as a kernel written before varlen existed: the bucketed path is its only way to a
// varlen batch, and a dense batch it refuses names the bucket.
KernelSpec dense_only_reference(std::int64_t max_seq) {
  KernelSpec s = *find_kernel("cpu.reference");
  s.id = "test.dense_reference";
  s.varlen = false;
  s.why_not = [max_seq](const Problem& p, const Knobs&) -> std::string {
    return p.seq_q > max_seq ? "seq_q = " + std::to_string(p.seq_q) + ": too long" : "";
  };
  return s;
}

TEST(Bucketing, KernelWhyNotAsksEachBatch) {
  const KernelSpec k = dense_only_reference(256);
  const Problem p = varlen_problem({1, 130, 300}, true);
  EXPECT_NE(kernel_why_not(k, p, {}).find("does not take variable-length batches"), std::string::npos);
  EXPECT_EQ(
      kernel_why_not(k, p, {{"bucket", 64}}).find("bucket of 320 rows (1 sequences): seq_q = 320: too long"),
      0u)
      << kernel_why_not(k, p, {{"bucket", 64}});
  EXPECT_EQ(kernel_why_not(dense_only_reference(1000), p, {{"bucket", 64}}), "");
  EXPECT_EQ(kernel_why_not(k, p, {{"bucket", 0}}), kernel_why_not(k, p, {}));
  Problem bwd = p;
  bwd.pass = Pass::bwd;
  EXPECT_NE(backward_why_not(k, bwd, {{"bucket", 64}}).find("runs the forward only (pass = bwd)"),
            std::string::npos);
}

std::vector<float> random_values(std::int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

// NSA's compressed branch of a varlen batch: each sequence's keys are its own blocks (one key row
// that no query sees for a sequence shorter than l).
Problem compressed_varlen(std::vector<std::int64_t> lengths, Compress c) {
  Problem p = varlen_problem(lengths, false);
  p.compress = c;
  for (std::int64_t& kv : p.varlen.kv) kv = c.key_rows(kv);
  p.seq_kv = *std::max_element(p.varlen.kv.begin(), p.varlen.kv.end());
  return p;
}

TEST(Bucketing, CompressedBranchPadsEachSequencesBlocks) {
  const Problem p = compressed_varlen({5, 200, 77}, {32, 16});
  ASSERT_EQ(p.validate(), "");
  EXPECT_EQ(p.varlen.kv, (std::vector<std::int64_t>{1, 11, 3}));
  EXPECT_EQ(bucketing_why_not(p, 64), "");
  const auto buckets = dense_buckets(p, 64);  // padded lengths 64, 128, 256
  for (const DenseBucket& d : buckets)
    EXPECT_EQ(d.problem.seq_kv, std::max<std::int64_t>(1, (d.length - 32) / 16 + 1));
  Problem off = p;
  off.varlen.kv[1] = 12;
  EXPECT_NE(bucketing_why_not(off, 64).find("sequence 1 has 12 keys, not the blocks of its 200 positions"),
            std::string::npos)
      << bucketing_why_not(off, 64);
}

TEST(Bucketing, WrapperMatchesThePackedPathBitForBit) {
  for (const Problem& p :
       {varlen_problem({1, 130, 17, 128, 64, 33}, true), varlen_problem({200, 5, 77}, false, {16, 0}),
        compressed_varlen({200, 5, 77, 64}, {32, 16}), compressed_varlen({40, 300}, {8, 4})}) {
    std::mt19937 rng(7);
    const std::vector<float> q = random_values(p.q_elems(), rng), k = random_values(p.k_elems(), rng),
                             v = random_values(p.v_elems(), rng);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto run = [&](PreparedKernel& kernel, std::vector<float>& o, std::vector<float>& lse) {
      o.assign(static_cast<std::size_t>(p.o_elems()), nan);
      lse.assign(static_cast<std::size_t>(p.lse_elems()), nan);
      AttentionArgs a;
      a.q = q.data();
      a.k = k.data();
      a.v = v.data();
      a.o = o.data();
      a.lse = lse.data();
      a.scale = static_cast<float>(p.default_scale());
      std::vector<unsigned char> ws(kernel.workspace_bytes());
      a.workspace = ws.data();
      a.workspace_bytes = ws.size();
      kernel.copy_in(a);
      kernel.run(a);
      kernel.copy_out(a);
    };
    const KernelSpec packed_spec = *find_kernel("cpu.reference");
    const KernelSpec dense_spec = dense_only_reference(1 << 20);
    ASSERT_EQ(kernel_why_not(dense_spec, p, {{"bucket", 32}}), "");
    std::vector<float> o1, l1, o2, l2;
    run(*prepare_kernel(packed_spec, p, {}), o1, l1);
    auto bucketed = prepare_kernel(dense_spec, p, {{"bucket", 32}});
    EXPECT_TRUE(bucketed->writes_lse());
    run(*bucketed, o2, l2);
    ASSERT_EQ(o1.size(), o2.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < o1.size(); ++i) differ += o1[i] == o2[i] ? 0 : 1;
    for (std::size_t i = 0; i < l1.size(); ++i) differ += l1[i] == l2[i] ? 0 : 1;
    EXPECT_EQ(differ, 0u) << p.full_label();
  }
}

TEST(Bucketing, VariantKnobOnEveryKernel) {
  AxisProblem problem;
  const auto r = try_resolve_kernel_variant("cpu.flash@bucket=128", problem);
  ASSERT_TRUE(r) << problem.what;
  EXPECT_EQ(knob_value(r->knobs, "bucket"), 128);
  EXPECT_EQ(r->label, "cpu.flash@bucket=128");
  const auto zero = try_resolve_kernel_variant("cpu.reference@bucket=0", problem);
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->label, "cpu.reference");
  EXPECT_TRUE(same_variant("cpu.reference@bucket=0", "cpu.reference"));
  EXPECT_FALSE(try_resolve_kernel_variant("cpu.flash@bucket=2000000", problem));
  EXPECT_NE(problem.allowed.find("1 to 1048576"), std::string::npos) << problem.allowed;
}

TEST(Bucketing, EngineChecksTimesAndRecordsTheWaste) {
  Protocol protocol;
  protocol.warmup_ms = 1;
  protocol.min_samples = 3;
  protocol.max_time_s = 0.01;
  const auto engine = make_engine(Backend::cpu, protocol);
  SweepSpec s;
  s.source = "test";
  s.kernels = {"cpu.flash", "cpu.flash@bucket=64"};
  SweepGroup g;
  g.batch = {6};
  g.heads = {2};
  g.seq_q = {150};
  g.head_dim = {16};
  g.causal = {1};
  g.varlen = parse_varlen_axis("uniform:10", "varlen");
  s.groups = {g};
  const auto cases = plan(s, Backend::cpu);
  ASSERT_EQ(cases.size(), 2u);
  const CaseResult packed = engine->run(cases[0]);
  const CaseResult bucketed = engine->run(cases[1]);
  ASSERT_EQ(packed.status, Status::ok) << packed.reason;
  ASSERT_EQ(bucketed.status, Status::ok) << bucketed.reason;
  EXPECT_EQ(bucketed.problem, packed.problem);
  EXPECT_NE(bucketed.case_id, packed.case_id);
  EXPECT_EQ(bucketed.variant, "cpu.flash@bucket=64");
  ASSERT_TRUE(bucketed.correctness && bucketed.correctness->pass);
  EXPECT_LT(bucketed.correctness->rel_l2, 1e-5);
  EXPECT_FALSE(packed.padding_waste);
  ASSERT_TRUE(bucketed.padding_waste);
  EXPECT_DOUBLE_EQ(*bucketed.padding_waste, padding_cost(bucketed.problem, 64).waste());
  EXPECT_GT(*bucketed.padding_waste, 0.0);
  EXPECT_DOUBLE_EQ(bucketed.flops, packed.flops);  // TFLOPS count the real pairs
}

}  // namespace
}  // namespace attn
