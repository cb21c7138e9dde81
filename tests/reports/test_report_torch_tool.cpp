// tools/torch_sdpa.py, the external-baseline importer: its case ids equal plan.cpp's (pinned on
// both sides), its CPU self-check passes, and the records it writes read back through the real
// JSONL reader and join a report.
#include <gtest/gtest.h>

#include "profiling/sweep/plan.hpp"
#include "reports/report_md.hpp"
#include "reports/result_set.hpp"
#include "tests/reports/sample_results.hpp"
#include "tests/reports/test_report_util.hpp"
#include "tests/support/test_paths.hpp"

namespace attn {
namespace {

// tools/torch_sdpa.py pins the same value as PINNED_CASE_ID.
constexpr const char* kPinnedTorchFlashId = "3a3ca28bb33a52a5";

TEST(TorchSdpaTool, CaseIdPinnedAgainstPlanCpp) {
  EXPECT_EQ(make_case_id("torch.flash", {}, test::gqa_problem()), kPinnedTorchFlashId)
      << canonical_case_text("torch.flash", {}, test::gqa_problem());
}

bool python311() {
  return std::system(
             "python3 -c 'import sys, tomllib; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1") == 0;
}

class TorchSdpaToolCli : public test::TempDirTest {};

TEST_F(TorchSdpaToolCli, SelfCheckRecordsReadBack) {
  if (!python311()) GTEST_SKIP() << "no python3 >= 3.11 with tomllib: tools/torch_sdpa.py cannot run here";
  const std::string tool = attn::test::source_dir() + "/tools/torch_sdpa.py";
  const auto emit = m_dir / "torch" / "results.jsonl";
  std::filesystem::create_directories(emit.parent_path());
  const std::string cmd = "python3 " + tool + " --self-check --presets-dir " + attn::test::source_dir() +
                          "/assets/presets --emit " + emit.string() + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  ASSERT_EQ(pclose(pipe), 0) << out;
  EXPECT_NE(out.find("self-check: ok"), std::string::npos) << out;

  const ResultSet set = load_result_set({emit.parent_path().string()});
  ASSERT_EQ(set.cases.size(), 3u);
  EXPECT_EQ(set.primary().backend, "cuda");
  EXPECT_EQ(set.primary().protocol.seed, 42u);
  const CaseResult& ok = set.cases[0];
  EXPECT_EQ(ok.kernel, "torch.flash");
  EXPECT_EQ(ok.status, Status::ok);
  // The id in the record is the one attnscope computes for that kernel and problem.
  EXPECT_EQ(ok.case_id, make_case_id(ok.kernel, ok.knobs, ok.problem));
  EXPECT_EQ(ok.problem.batch, 1);  // ffpa-large-d's first problem: B=1 H=48 S=8192 D=256
  EXPECT_EQ(ok.problem.head_dim, 256);
  EXPECT_DOUBLE_EQ(ok.flops, ok.problem.flops());
  EXPECT_EQ(ok.min_bytes, ok.problem.min_bytes(false));
  ASSERT_TRUE(ok.timing && ok.tflops && ok.correctness && ok.device_bytes_peak);
  EXPECT_NEAR(*ok.tflops, ok.flops / (ok.timing->median_ms * 1e-3) * 1e-12, 1e-9 * *ok.tflops);
  EXPECT_EQ(ok.correctness->sampled_rows, 48);
  EXPECT_EQ(set.cases[1].kernel, "torch.efficient");
  EXPECT_EQ(set.cases[1].status, Status::skipped);
  EXPECT_EQ(set.cases[2].status, Status::oom);
  EXPECT_EQ(set.cases[2].case_id, kPinnedTorchFlashId);
  // The records join a report.
  EXPECT_NE(markdown_report(set, {}).find("torch.flash"), std::string::npos);
}

TEST_F(TorchSdpaToolCli, PlanOnlyMatchesTheAttnscopePlan) {
  if (!python311()) GTEST_SKIP() << "no python3 >= 3.11 with tomllib: tools/torch_sdpa.py cannot run here";
  const std::string cmd = "python3 " + attn::test::source_dir() +
                          "/tools/torch_sdpa.py --preset fa2-tokens16k --backends flash --plan-only 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::vector<std::string> lines;
  char buf[1024];
  while (std::fgets(buf, sizeof buf, pipe)) lines.emplace_back(buf);
  ASSERT_EQ(pclose(pipe), 0);
  ASSERT_EQ(lines.size(), 36u);
  // Every line: "<id> torch.flash <canonical text> <skip reason>"; the id hashes the text.
  for (const std::string& l : lines) {
    const auto a = l.find(' '), b = l.find(' ', a + 1), c = l.find(' ', b + 1);
    const std::string id = l.substr(0, a), text = l.substr(b + 1, c - b - 1);
    EXPECT_EQ(text.rfind("case.v1|kernel=torch.flash|", 0), 0u) << l;
    std::uint64_t h = 14695981039346656037ull;
    for (const unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    EXPECT_EQ(id, hex) << l;
  }
  EXPECT_NE(lines.front().find("|b=32|hq=32|hkv=32|sq=512|sk=512|d=64|dv=64|dtype=fp16|causal=0|"),
            std::string::npos);
  EXPECT_NE(lines.back().find("|b=1|hq=8|hkv=8|sq=16384|sk=16384|d=256|dv=256|dtype=fp16|causal=1|"),
            std::string::npos);
}

}  // namespace
}  // namespace attn
