// NSA's compressed branch through the sweep's front door: the axis syntax, preset forms and the
// writer, planning (Sk derived from Sq, refusals, errors), case ids and the record schema.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kernels/registry.hpp"
#include "profiling/sweep/axis_parse.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/sweep/preset.hpp"
#include "profiling/sweep/varlen_axis.hpp"
#include "reports/result_json.hpp"
#include "tests/support/spec_error.hpp"

namespace attn {
namespace {

using test::error_of;
using C = std::vector<Compress>;

TEST(CompressAxis, ParsesBranchesAndNone) {
  EXPECT_EQ(parse_compress_axis("32,16", "--compress"), (C{{32, 16}}));
  EXPECT_EQ(parse_compress_axis("32,16; 64,32;none", "--compress"), (C{{32, 16}, {64, 32}, {}}));
  EXPECT_EQ(format_compress_axis(C{{32, 16}, {}}), "32,16;none");
  EXPECT_EQ(
      error_of([] { parse_compress_axis("32", "--compress"); }),
      "--compress '32': compressed branch '32' has 1 numbers, not 2 (l,d); expected compressed branches "
      "l,d (block length, stride, both >= 1) separated by ';' like 32,16;64,32, or none");
  EXPECT_NE(error_of([] { parse_compress_axis("32,0", "--compress"); }).find("stride d = 0 is below 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_compress_axis("x,16", "--compress"); }).find("'x' is not an integer"),
            std::string::npos);
}

TEST(CompressAxis, PresetFormsAndTheWriterRoundTrip) {
  const SweepSpec s = parse_preset(R"(
name = "cmp"
kernels = ["cpu.reference"]
backend = "cpu"
[sweep]
batch = 1
heads = 2
head_dim = 32
seq = [256, 512]
compress = [32, 16]
[[group]]
compress = [[32, 16], "64,32", "none"]
[[group]]
compress = "16,8;none"
)",
                                   "cmp.toml");
  ASSERT_EQ(s.groups.size(), 2u);
  EXPECT_EQ(s.groups[0].compress, (C{{32, 16}, {64, 32}, {}}));
  EXPECT_EQ(s.groups[1].compress, (C{{16, 8}, {}}));
  const SweepSpec back = parse_preset(preset_toml(s), "saved.toml");
  EXPECT_EQ(back.groups[0].compress, s.groups[0].compress);
  EXPECT_EQ(back.groups[1].compress, s.groups[1].compress);
  EXPECT_NE(error_of([] {
              parse_preset("[sweep]\ncompress = [32, 16, 8]\n", "bad.toml");
            }).find("field 'sweep.compress' = '[32, 16, 8]': a compressed branch is two integers [l, d]"),
            std::string::npos);
}

SweepSpec compressed_spec() {
  SweepSpec s;
  s.source = "test";
  s.kernels = {"cpu.reference", "cpu.flash"};
  SweepGroup g;
  g.batch = {1};
  g.heads = {2};
  g.seq_q = {256, 1024};
  g.head_dim = {32};
  g.compress = {{32, 16}, {}};
  s.groups = {g};
  return s;
}

TEST(CompressAxis, PlanDerivesSkFromSqAndKeepsOtherIds) {
  const auto cases = plan(compressed_spec(), Backend::cpu);
  ASSERT_EQ(cases.size(), 8u);  // 2 compress x 2 seq x 2 kernels
  EXPECT_EQ(cases[0].problem.full_label(), "B=1 Hq=2 Sq=256 Sk=15 D=32 fp32 cmp32,16");
  EXPECT_EQ(cases[2].problem.seq_kv, 63);  // (1024 - 32) / 16 + 1
  EXPECT_EQ(cases[4].problem.full_label(), "B=1 Hq=2 Sq=256 D=32 fp32 full");
  for (const Case& c : cases) EXPECT_EQ(c.skip_reason, "") << c.problem.full_label();
  EXPECT_NE(canonical_case_text("cpu.reference", {}, cases[0].problem).find("|layout=bshd|compress=32,16"),
            std::string::npos);
  // A problem without the branch keeps the id it had before the branch existed.
  EXPECT_EQ(canonical_case_text("cpu.reference", {}, cases[4].problem).find("compress"), std::string::npos);

  SweepSpec explicit_kv = compressed_spec();
  explicit_kv.groups[0].seq_kv = {40};
  explicit_kv.groups[0].compress = {{32, 16}};
  EXPECT_EQ(plan(explicit_kv, Backend::cpu)[0].problem.seq_kv, 40);
}

TEST(CompressAxis, PlanErrorsAndRefusals) {
  SweepSpec s = compressed_spec();
  s.groups[0].seq_q = {16};
  EXPECT_EQ(error_of([&] { plan(s, Backend::cpu); }),
            "test: group[0]: seq_q = 16 is shorter than the compressed block l = 32 (no query would see a "
            "block); use seq >= l");
  s = compressed_spec();
  s.groups[0].causal = {1};
  s.shapes_from_flags = true;
  EXPECT_NE(error_of([&] {
              plan(s, Backend::cpu);
            }).find("compress = (32,16) with causal = 1: the compressed branch is its own causal rule"),
            std::string::npos);
  s.shapes_from_flags = false;  // from a preset: such a case is skipped with the same words
  const auto cases = plan(s, Backend::cpu);
  EXPECT_NE(cases[0].skip_reason.find("its own causal rule"), std::string::npos);

  register_debug_kernels(Backend::cpu);  // debug.wrong predates the mask: refused, never run unmasked
  s = compressed_spec();
  s.kernels = {"debug.wrong"};
  const auto refused = plan(s, Backend::cpu);
  EXPECT_EQ(
      refused[0].skip_reason,
      "debug.wrong does not implement NSA's compressed-branch mask (compress = 32,16); `attnscope kernels` "
      "marks those that do in its cmp column");
  EXPECT_EQ(refused[2].skip_reason, "");  // the same kernel on the problem without the branch
}

TEST(CompressAxis, AVarlenBatchGetsEachSequencesBlocks) {
  SweepSpec s = compressed_spec();
  s.groups[0].batch = {3};
  s.groups[0].seq_q = {512};
  s.groups[0].compress = {{32, 16}};
  s.groups[0].varlen = {parse_varlen_axis("list:20,300,512", "--varlen")[0]};
  const auto cases = plan(s, Backend::cpu);
  ASSERT_EQ(cases.size(), 2u);
  const Problem& p = cases[0].problem;
  EXPECT_EQ(p.validate(), "");
  EXPECT_EQ(p.varlen.q, (std::vector<std::int64_t>{20, 300, 512}));
  EXPECT_EQ(p.varlen.kv, (std::vector<std::int64_t>{1, 17, 31}));  // 20 < l: one key nobody sees
  EXPECT_EQ(p.seq_kv, 31);
  EXPECT_EQ(cases[0].skip_reason, "");
  // Pairs: each sequence's own compressed pairs.
  Problem one = p.sequence(1);
  EXPECT_EQ(p.visible_pairs_per_head(),
            one.visible_pairs_per_head() + p.sequence(2).visible_pairs_per_head());
}

TEST(CompressAxis, RecordsCarryTheBranchAndOmitItWhenOff) {
  Problem p;
  p.seq_q = 256;
  p.seq_kv = 15;
  p.compress = {32, 16};
  const nlohmann::json j = p;
  EXPECT_EQ(j.at("compress"), nlohmann::json::array({32, 16}));
  EXPECT_EQ(j.get<Problem>(), p);
  p.compress = {};
  const nlohmann::json off = p;
  EXPECT_FALSE(off.contains("compress"));
}

}  // namespace
}  // namespace attn
