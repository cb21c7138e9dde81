// NSA's selected branch through the sweep's front door: the axis syntax, preset forms and the
// writer, planning (refusals, errors), case ids, the record schema and the CSV columns.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/registry.hpp"
#include "profiling/field_catalogue.hpp"
#include "profiling/sweep/axis_parse.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/sweep/preset.hpp"
#include "reports/result_json.hpp"
#include "tests/support/spec_error.hpp"

namespace attn {
namespace {

using test::error_of;
using S = std::vector<Select>;

TEST(SelectAxis, ParsesBranchesSeedsAndNone) {
  EXPECT_EQ(parse_select_axis("64,16", "--select"), (S{{64, 16, 0}}));
  EXPECT_EQ(parse_select_axis("64,16; 64,16,7;none", "--select"), (S{{64, 16, 0}, {64, 16, 7}, {}}));
  EXPECT_EQ(format_select_axis(S{{64, 16, 0}, {64, 16, 7}, {}}), "64,16;64,16,7;none");
  EXPECT_EQ(error_of([] { parse_select_axis("64", "--select"); }),
            "--select '64': selected branch '64' has 1 numbers, not 2 or 3 (l',n[,seed]); expected selected "
            "branches l',n[,seed] (block length, blocks per query block, both >= 1; seed >= 0, default 0) "
            "or l',n,file:PATH (the index tensor from a .npy or text file) separated by ';' like "
            "64,16;64,16,7, or none");
  EXPECT_NE(error_of([] { parse_select_axis("64,0", "--select"); }).find("count n = 0 is below 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_select_axis("64,4,-1", "--select"); }).find("seed = -1 is below 0"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_select_axis("x,16", "--select"); }).find("'x' is not an integer"),
            std::string::npos);
}

TEST(SelectAxis, AFileTakesThePlaceOfTheSeed) {
  const S v = parse_select_axis("64,16,file:idx/a,b.npy;64,4", "--select");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].file, "idx/a,b.npy");
  EXPECT_EQ(v[0].count, 16);
  EXPECT_EQ(format_select_axis(v), "64,16,file:idx/a,b.npy;64,4");
  EXPECT_NE(error_of([] { parse_select_axis("64,16,file:", "--select"); }).find("file: needs a path"),
            std::string::npos);
}

TEST(SelectAxis, PlanReadsTheFileRecordsItsHashAndRefusesAMismatch) {
  const std::string path = (std::filesystem::temp_directory_path() / "attnscope-plan-select.txt").string();
  {
    std::ofstream f(path);
    for (const char* row : {"0 -1", "0 1", "2 -1", "0 3"}) f << row << '\n';  // B=1 Hkv=1 S=256 l'=64 n=2
  }
  SweepSpec s;
  s.source = "test";
  s.kernels = {"cpu.reference"};
  SweepGroup g;
  g.batch = {1};
  g.heads = {2};
  g.heads_kv = {1};
  g.seq_q = {256};
  g.head_dim = {32};
  g.select = parse_select_axis("64,2,file:" + path, "--select");
  s.groups = {g};
  const auto cases = plan(s, Backend::cpu);
  ASSERT_EQ(cases.size(), 1u);
  const Problem& p = cases[0].problem;
  EXPECT_EQ(p.validate(), "");
  EXPECT_EQ(p.select.file_sha256.size(), 64u);
  EXPECT_EQ(p.select.file_pairs, 2080 + (4096 + 2080) + 2080 + (4096 + 2080));
  EXPECT_NE(canonical_case_text("cpu.reference", {}, p).find("|select_file=" + p.select.file_sha256),
            std::string::npos);
  const nlohmann::json j = p;
  EXPECT_EQ(j.at("select_file").at("pairs"), p.select.file_pairs);
  EXPECT_EQ(j.get<Problem>(), p);
  s.groups[0].seq_q = {512};  // 8 query blocks: the file holds 4 rows of 2
  EXPECT_NE(error_of([&] { plan(s, Backend::cpu); }).find("holds 8 values; this problem's index tensor"),
            std::string::npos);
}

TEST(SelectAxis, PresetFormsAndTheWriterRoundTrip) {
  const SweepSpec s = parse_preset(R"(
name = "sel"
kernels = ["cpu.reference"]
backend = "cpu"
[sweep]
batch = 1
heads = 2
head_dim = 32
seq = [256, 512]
select = [64, 4]
[[group]]
select = [[64, 4], [64, 4, 9], "32,2", "none"]
[[group]]
select = "16,8,3;none"
[[group]]
)",
                                   "sel.toml");
  ASSERT_EQ(s.groups.size(), 3u);
  EXPECT_EQ(s.groups[0].select, (S{{64, 4, 0}, {64, 4, 9}, {32, 2, 0}, {}}));
  EXPECT_EQ(s.groups[1].select, (S{{16, 8, 3}, {}}));
  EXPECT_EQ(s.groups[2].select, (S{{64, 4, 0}}));  // inherited from [sweep]
  const SweepSpec back = parse_preset(preset_toml(s), "saved.toml");
  for (std::size_t g = 0; g < 3; ++g) EXPECT_EQ(back.groups[g].select, s.groups[g].select) << g;
  EXPECT_NE(error_of([] {
              parse_preset("[sweep]\nselect = [64, 4, 1, 2]\n", "bad.toml");
            }).find("field 'sweep.select' = '[64, 4, 1, 2]': a selected branch is two or three integers"),
            std::string::npos);
}

SweepSpec selected_spec() {
  SweepSpec s;
  s.source = "test";
  s.kernels = {"cpu.reference", "cpu.flash"};
  SweepGroup g;
  g.batch = {1};
  g.heads = {2};
  g.seq_q = {256};
  g.head_dim = {32};
  g.select = {{64, 2, 0}, {64, 2, 5}, {}};
  s.groups = {g};
  return s;
}

TEST(SelectAxis, PlanKeepsSeedsApartAndOtherIdsAsTheyWere) {
  const auto cases = plan(selected_spec(), Backend::cpu);
  ASSERT_EQ(cases.size(), 6u);  // 3 select x 2 kernels
  EXPECT_EQ(cases[0].problem.full_label(), "B=1 Hq=2 Sq=256 D=32 fp32 sel64x2");
  EXPECT_EQ(cases[2].problem.full_label(), "B=1 Hq=2 Sq=256 D=32 fp32 sel64x2s5");
  EXPECT_NE(cases[0].case_id, cases[2].case_id);
  EXPECT_EQ(cases[0].skip_reason, "");
  // cpu.flash predates the branch: refused, never run as plain causal.
  EXPECT_EQ(
      cases[1].skip_reason,
      "cpu.flash does not implement NSA's selected branch (select = 64,2); `attnscope kernels` marks those "
      "that do in its sel column");
  EXPECT_EQ(cases[5].skip_reason, "");
  EXPECT_NE(canonical_case_text("cpu.reference", {}, cases[2].problem).find("|layout=bshd|select=64,2,5"),
            std::string::npos);
  EXPECT_EQ(canonical_case_text("cpu.reference", {}, cases[4].problem).find("select"), std::string::npos);
}

TEST(SelectAxis, PlanErrorsNameTheRule) {
  SweepSpec s = selected_spec();
  s.groups[0].causal = {1};
  s.shapes_from_flags = true;
  EXPECT_NE(error_of([&] {
              plan(s, Backend::cpu);
            }).find("select = (64,2) with causal = 1: the selected branch is its own causal rule"),
            std::string::npos);
  s = selected_spec();
  s.groups[0].seq_kv = {128};
  s.shapes_from_flags = true;
  EXPECT_NE(error_of([&] { plan(s, Backend::cpu); }).find("make seq_kv = seq_q"), std::string::npos);
}

TEST(SelectAxis, RecordsAndCsvCarryTheBranch) {
  Problem p;
  p.seq_q = p.seq_kv = 256;
  p.select = {64, 4, 7};
  const nlohmann::json j = p;
  EXPECT_EQ(j.at("select"), nlohmann::json::array({64, 4, 7}));
  EXPECT_EQ(j.get<Problem>(), p);
  nlohmann::json bad = j;
  bad["select"] = nlohmann::json::array({64, 4});
  try {
    (void)bad.get<Problem>();
    ADD_FAILURE() << "a two-entry select was read";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()), "problem.select: expected [block, count, seed], got [64,4]");
  }
  p.select = {};
  const nlohmann::json off = p;
  EXPECT_FALSE(off.contains("select"));

  CaseResult c;
  c.problem.select = {128, 8, 3};
  for (const auto& [name, value] :
       {std::pair{"select_block", 128}, {"select_count", 8}, {"select_seed", 3}}) {
    const FieldDesc* f = find_field(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_TRUE(f->csv);
    EXPECT_EQ(std::get<std::int64_t>(f->get(c)), value) << name;
  }
  CaseResult back;
  EXPECT_EQ(find_field("select_seed")->set(back, FieldValue{std::int64_t{-2}}), "a seed >= 0, got -2");
  EXPECT_EQ(find_field("select_seed")->set(back, FieldValue{std::int64_t{3}}), "");
  EXPECT_EQ(back.problem.select.seed, 3u);
}

}  // namespace
}  // namespace attn
