// GPU tests for ffpa.wgmma (kernels/ffpa/wgmma/, sm_90a): D 64/256/320/480/576/640/1024 (one pass and
// several, Q resident and streamed, one and two warpgroups a CTA, a 32-column tail chunk; passes
// recomputing S and sharing it in a cluster (each the default somewhere, the other by the knob); the wide
// kernels' passes (acc_f16 640 columns on 96-key tiles, acc_f32 320 on 64-key tiles) where they save a pass,
// the default, and the narrower passes there by the knob; the split form (two warpgroups over the same 64
// rows, each over half of D) where it is the default and by the knob elsewhere, and the rows' forms by the
// knob where it is the default) x S 1/100/4097, causal, GQA, Sq != Sk both ways (Sk up to 20000), a window, Q
// streamed by the knob; output poisoned with NaN first. acc_f32 is held to 2x cublas.unfused's error on the
// same inputs (floored at a quarter of the dtype bound), acc_f16 to its stated bound
// (tests/support/ffpa_tolerance.hpp). Host checks of the specs and the pass arithmetic run everywhere.
// Timings: scripts/device/ffpa_wgmma_run.sh and docs/PERF.md.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/ffpa/ffpa_accuracy.hpp"
#include "kernels/ffpa/wgmma/ffpa_wgmma_traits.hpp"
#include "kernels/registry.hpp"
#include "tests/support/ffpa_checks.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/kernel_harness.hpp"

namespace attn {
KernelSpec make_cublas_unfused_spec();
}  // namespace attn

namespace {

using attn::DType;
using attn::Problem;
namespace fw = attn::ffpa_wgmma;

using namespace attn::test;  // NOLINT(google-build-using-namespace): the shared harness

const attn::KernelSpec* wgmma_spec(bool acc_f16, std::string& why) {
  return attn::sm90a_kernel(acc_f16 ? "ffpa.wgmma.acc_f16" : "ffpa.wgmma.acc_f32", ATTNSCOPE_HAS_FFPA_WGMMA,
                            why);
}

struct WgmmaCase {
  std::string name;
  bool acc_f16 = false;
  Problem problem;
  int q_stream = 0;
  int warpgroups = 0;
  int cluster = 0;
  int pass_cols = 0;
  int split_d = 0;
};

std::vector<WgmmaCase> all_cases() {
  std::vector<WgmmaCase> out;
  for (int d : {64, 256, 320, 480, 576, 640, 1024})
    for (const FfpaVariant& v : kFfpaVariants) {
      const std::string tag = ffpa_case_prefix(d, v);
      const DType t = v.dtype;
      auto add = [&](const std::string& n, const Problem& p, int q_stream = 0, int warpgroups = 0,
                     int cluster = 0) {
        out.push_back({tag + n, v.acc_f16, p, q_stream, warpgroups, cluster});
      };
      add("s1", make_problem(1, 3, 3, 1, 1, d, t));
      add("s100_causal_gqa", make_problem(2, 8, 2, 100, 100, d, t, true));
      add("sq100_sk4097_causal", make_problem(1, 2, 2, 100, 4097, d, t, true));
      add("sq4097_sk100_causal", make_problem(1, 1, 1, 4097, 100, d, t, true));  // 3997 rows see no key
      add("s4097_full", make_problem(1, 3, 3, 4097, 4097, d, t));
      add("s4097_causal_gqa_qstream", make_problem(1, 4, 2, 4097, 4097, d, t, true), 1);
      add("s1000_win128_64", make_problem(1, 3, 3, 1000, 1000, d, t, false, {128, 64}));
      // A long key range: 157 tiles of rescales (acc_f32) or renormalisations of fp16 O (acc_f16).
      add("sq64_sk20000_causal_gqa", make_problem(1, 2, 1, 64, 20000, d, t, true));
      // One warpgroup a CTA (64 rows, two CTAs an SM, Q streamed).
      add("s100_causal_gqa_wg1", make_problem(2, 8, 2, 100, 100, d, t, true), 0, 1);
      add("sq4097_sk100_causal_wg1", make_problem(1, 1, 1, 4097, 100, d, t, true), 0, 1);
      add("s4097_full_wg1", make_problem(1, 3, 3, 4097, 4097, d, t), 0, 1);
      add("s1000_win128_64_wg1", make_problem(1, 3, 3, 1000, 1000, d, t, false, {128, 64}), 0, 1);
      // The split form where it is the default runs above; the warpgroups splitting the rows there, and
      // the split form elsewhere, by the knob split_d.
      if (fw::split_fits(d, v.acc_f16)) {
        const bool split_default = fw::split_by_default(d, v.acc_f16, 2);
        const int other = split_default ? 1 : 2;
        const auto add_other = [&](const std::string& n, const Problem& p) {
          out.push_back({tag + n + (split_default ? "_rows" : "_split"), v.acc_f16, p, 0, 0, 0, 0, other});
        };
        add_other("s100_causal_gqa", make_problem(2, 8, 2, 100, 100, d, t, true));
        add_other("sq4097_sk100_causal", make_problem(1, 1, 1, 4097, 100, d, t, true));
        add_other("s4097_full", make_problem(1, 3, 3, 4097, 4097, d, t));
        add_other("s1000_win128_64", make_problem(1, 3, 3, 1000, 1000, d, t, false, {128, 64}));
      }
      // Where the wide kernel saves a pass it is the default (acc_f16 at D 576 and 640, acc_f32 at 320; at
      // 576 and 640 with split_d = 1, the `_rows` cases above); the narrower passes by the knob.
      if (fw::wide_by_default(d, v.acc_f16, 2)) {
        const int cols = fw::max_pass_cols(v.acc_f16);
        const auto add_narrow = [&](const std::string& n, const Problem& p) {
          out.push_back({tag + n + "_pass" + std::to_string(cols), v.acc_f16, p, 0, 0, 0, cols});
        };
        add_narrow("s100_causal_gqa", make_problem(2, 8, 2, 100, 100, d, t, true));
        add_narrow("sq4097_sk100_causal", make_problem(1, 1, 1, 4097, 100, d, t, true));
        add_narrow("s4097_full", make_problem(1, 3, 3, 4097, 4097, d, t));
      }
      // Several passes: the cases above take the default (recomputing S in every pass, or sharing it in a
      // cluster where that is the default: acc_f16 from D 672); these the other, Q resident where it fits
      // and streamed.
      if (fw::passes_of(d, v.acc_f16) > 1) {
        const bool cluster_default = fw::cluster_by_default(d, v.acc_f16);
        const int other = cluster_default ? 1 : 2;
        const std::string sfx = cluster_default ? "_recompute" : "_cluster";
        add("s1" + sfx, make_problem(1, 3, 3, 1, 1, d, t), 0, 0, other);
        add("s100_causal_gqa" + sfx, make_problem(2, 8, 2, 100, 100, d, t, true), 0, 0, other);
        add("sq4097_sk100_causal" + sfx, make_problem(1, 1, 1, 4097, 100, d, t, true), 0, 0, other);
        add("s4097_full" + sfx, make_problem(1, 3, 3, 4097, 4097, d, t), 0, 0, other);
        add("s4097_causal_gqa_qstream" + sfx, make_problem(1, 4, 2, 4097, 4097, d, t, true), 1, 0, other);
        add("s1000_win128_64" + sfx, make_problem(1, 3, 3, 1000, 1000, d, t, false, {128, 64}), 0, 0, other);
        add("sq64_sk20000_causal_gqa" + sfx, make_problem(1, 2, 1, 64, 20000, d, t, true), 0, 0, other);
      }
    }
  // The 32-column tail chunk (D % 64 == 32), one pass and two.
  for (int d : {288, 800})
    for (int wgs : {1, 2}) {
      const std::string tail = "_sq333_sk1001_causal_gqa_wg" + std::to_string(wgs);
      out.push_back({"d" + std::to_string(d) + "_f32_fp16" + tail, false,
                     make_problem(1, 6, 2, 333, 1001, d, DType::fp16, true), 0, wgs});
      out.push_back({"d" + std::to_string(d) + "_f16_fp16" + tail, true,
                     make_problem(1, 6, 2, 333, 1001, d, DType::fp16, true), 0, wgs});
      if (wgs == 2) {  // a cluster whose last CTA owns the 32-column chunk (D 800: 4 + 4 + 4 + 1 chunks)
        out.push_back({"d" + std::to_string(d) + "_f32_fp16" + tail + "_cluster", false,
                       make_problem(1, 6, 2, 333, 1001, d, DType::fp16, true), 0, wgs, 2});
        // The other split of the warpgroups from the default: both D in the rows by default, so these
        // take the split form (D 800: 13 chunks, 7 + 6 for Q K^T, the tail in the second warpgroup's last).
        for (bool acc_f16 : {false, true}) {
          const int other = fw::split_by_default(d, acc_f16, 2) ? 1 : 2;
          out.push_back({"d" + std::to_string(d) + (acc_f16 ? "_f16_fp16" : "_f32_fp16") + tail +
                             (other == 2 ? "_split" : "_rows"),
                         acc_f16, make_problem(1, 6, 2, 333, 1001, d, DType::fp16, true), 0, wgs, 0, 0,
                         other});
        }
      }
    }
  // The 640-column kernel where its 64-column chunks end in a 32-column tail (D 544 and 608, Q
  // resident), and by the knob at D 1024 (two passes of 512 columns on 96-key tiles, Q streamed).
  for (int d : {544, 608, 1024}) {
    const std::string tag = "d" + std::to_string(d) + "_f16_fp16_pass640_";
    const auto add = [&](const std::string& n, const Problem& p) {
      out.push_back({tag + n, true, p, 0, 0, 0, fw::wide_pass_cols(true)});
    };
    add("sq333_sk1001_causal_gqa", make_problem(1, 6, 2, 333, 1001, d, DType::fp16, true));
    add("s1000_win128_64", make_problem(1, 3, 3, 1000, 1000, d, DType::fp16, false, {128, 64}));
    if (d != 1024) add("sq100_sk4097_causal", make_problem(1, 2, 2, 100, 4097, d, DType::fp16, true));
  }
  // acc_f32's 320-column kernel in three passes (by the knob only) with a 32-column tail, both dtypes.
  for (DType t : {DType::fp16, DType::bf16}) {
    const std::string tag = std::string("d800_f32_") + (t == DType::fp16 ? "fp16" : "bf16") + "_pass320_";
    out.push_back({tag + "sq333_sk1001_causal_gqa", false, make_problem(1, 6, 2, 333, 1001, 800, t, true), 0,
                   0, 0, fw::wide_pass_cols(false)});
    out.push_back({tag + "s1000_win128_64", false,
                   make_problem(1, 3, 3, 1000, 1000, 800, t, false, {128, 64}), 0, 0, 0,
                   fw::wide_pass_cols(false)});
  }
  return out;
}

void PrintTo(const WgmmaCase& c, std::ostream* os) { *os << c.name; }

class FfpaWgmmaTest : public ::testing::TestWithParam<WgmmaCase> {};

TEST_P(FfpaWgmmaTest, MatchesOracleWithinItsBound) {
  ATTN_SKIP_WITHOUT_GPU();
  const WgmmaCase& c = GetParam();
  std::string why_skip;
  const attn::KernelSpec* spec = wgmma_spec(c.acc_f16, why_skip);
  if (spec == nullptr) GTEST_SKIP() << why_skip;
  const Problem& p = c.problem;
  ASSERT_EQ(p.validate(), "");
  const std::uint32_t seed = static_cast<std::uint32_t>(std::hash<std::string>{}(p.full_label()) + 17u);
  OracleRun run;
  run_against_oracle(*spec, p,
                     {{"q_stream", c.q_stream},
                      {"warpgroups", c.warpgroups},
                      {"cluster", c.cluster},
                      {"pass_cols", c.pass_cols},
                      {"split_d", c.split_d}},
                     seed, run);
  if (HasFatalFailure()) return;

  FfpaTolerance tol;
  ffpa_tolerance(p, c.acc_f16, run.in, run.ref, tol);
  if (HasFatalFailure()) return;
  const int d = static_cast<int>(p.head_dim);
  const fw::Form form = fw::form_of(d, c.acc_f16, c.warpgroups == 0 ? fw::kDefaultWarpgroups : c.warpgroups,
                                    {c.pass_cols, c.cluster, c.split_d, c.q_stream});
  std::cout << "[" << spec->id << "] " << c.name << " (" << p.full_label() << ", q_stream " << c.q_stream
            << ", warpgroups " << c.warpgroups << ", cluster " << c.cluster << ", pass_cols " << c.pass_cols
            << ", split_d " << c.split_d << ", form " << fw::form_name(form) << ", passes "
            << fw::passes_of(d, c.acc_f16, form) << "): rel_l2 " << run.err.rel_l2 << ", cublas.unfused "
            << tol.math_err << ", tol " << tol.rel_l2 << " (" << tol.rule << "), LSE max abs "
            << run.err.lse_max_abs << " (tol " << tol.lse_abs << "), empty rows " << run.empty_rows
            << ", rows checked " << run.ref.rows.size() << "\n";
  EXPECT_LE(run.err.rel_l2, tol.rel_l2) << p.full_label();
  EXPECT_LE(run.err.lse_max_abs, tol.lse_abs) << p.full_label();
}

std::string case_name(const ::testing::TestParamInfo<WgmmaCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(FfpaWgmma, FfpaWgmmaTest, ::testing::ValuesIn(all_cases()), case_name);

// Host-only: refusals name the field and what is allowed; the pass split covers D exactly.
TEST(FfpaWgmmaSpec, RefusesWhatItDoesNotTake) {
  const attn::KernelSpec* f32 = attn::find_kernel("ffpa.wgmma.acc_f32");
  const attn::KernelSpec* f16 = attn::find_kernel("ffpa.wgmma.acc_f16");
  ASSERT_NE(f32, nullptr);
  ASSERT_NE(f16, nullptr);
#if !ATTNSCOPE_HAS_FFPA_WGMMA
  // Registered in every CUDA build; without the sm_90a target they refuse every problem, saying why.
  EXPECT_NE(f32->why_not(make_problem(1, 8, 2, 100, 300, 1024, DType::bf16, true), {}).find("no 90a target"),
            std::string::npos);
#else
  EXPECT_EQ(f32->why_not(make_problem(1, 8, 2, 100, 300, 1024, DType::bf16, true), {}), "");
  EXPECT_EQ(f16->why_not(make_problem(1, 8, 2, 100, 300, 288, DType::fp16, true), {{"q_stream", 1}}), "");
  EXPECT_NE(f16->why_not(make_problem(1, 1, 1, 16, 16, 512, DType::bf16), {}).find("use ffpa.wgmma.acc_f32"),
            std::string::npos);
  EXPECT_NE(f32->why_not(make_problem(1, 1, 1, 16, 16, 1056, DType::fp16), {}).find("head_dim = 1056"),
            std::string::npos);
  EXPECT_NE(f32->why_not(make_problem(1, 1, 1, 16, 16, 272, DType::fp16), {}).find("multiples of 32"),
            std::string::npos);
  EXPECT_NE(
      f32->why_not(make_problem(1, 1, 1, 16, 16, 512, DType::fp16), {{"q_stream", 2}}).find("q_stream = 2"),
      std::string::npos);
  EXPECT_NE(f32->why_not(make_problem(1, 1, 1, 16, 16, 512, DType::fp16), {{"warpgroups", 3}})
                .find("warpgroups = 3"),
            std::string::npos);
  EXPECT_NE(
      f32->why_not(make_problem(1, 1, 1, 16, 16, 512, DType::fp16), {{"cluster", 3}}).find("cluster = 3"),
      std::string::npos);
  EXPECT_NE(f32->why_not(make_problem(1, 1, 1, 16, 16, 512, DType::fp16), {{"cluster", 2}, {"warpgroups", 1}})
                .find("two warpgroups"),
            std::string::npos);
  EXPECT_NE(f32->why_not(make_problem(1, 1, 1, 16, 16, 512, DType::fp16), {{"pass_cols", 640}})
                .find("pass_cols = 640: ffpa.wgmma.acc_f32 takes 256"),
            std::string::npos);
  EXPECT_NE(
      f32->why_not(make_problem(1, 1, 1, 16, 16, 640, DType::fp16), {{"pass_cols", 320}, {"cluster", 2}})
          .find("pass_cols = 320 with cluster = 2"),
      std::string::npos);
  EXPECT_NE(f16->why_not(make_problem(1, 1, 1, 16, 16, 640, DType::fp16), {{"pass_cols", 300}})
                .find("pass_cols = 300: ffpa.wgmma.acc_f16 takes 512 or 640"),
            std::string::npos);
  EXPECT_NE(
      f16->why_not(make_problem(1, 1, 1, 16, 16, 640, DType::fp16), {{"pass_cols", 640}, {"warpgroups", 1}})
          .find("two warpgroups"),
      std::string::npos);
  EXPECT_NE(
      f16->why_not(make_problem(1, 1, 1, 16, 16, 640, DType::fp16), {{"pass_cols", 640}, {"cluster", 2}})
          .find("512-column passes"),
      std::string::npos);
  EXPECT_EQ(
      f16->why_not(make_problem(1, 1, 1, 16, 16, 640, DType::fp16), {{"pass_cols", 512}, {"cluster", 2}}),
      "");
  // The split form: the knob's values, and the knobs it cannot honour, by name.
  EXPECT_EQ(f32->why_not(make_problem(1, 8, 2, 100, 300, 1024, DType::bf16, true), {{"split_d", 2}}), "");
  EXPECT_EQ(f16->why_not(make_problem(1, 8, 2, 100, 300, 96, DType::fp16, true), {{"split_d", 2}}), "");
  EXPECT_NE(
      f16->why_not(make_problem(1, 1, 1, 16, 16, 1024, DType::fp16), {{"split_d", 3}}).find("split_d = 3"),
      std::string::npos);
  EXPECT_NE(f16->why_not(make_problem(1, 1, 1, 16, 16, 1024, DType::fp16), {{"split_d", 2}, {"q_stream", 1}})
                .find("split_d = 2 with q_stream = 1"),
            std::string::npos);
  EXPECT_NE(
      f16->why_not(make_problem(1, 1, 1, 16, 16, 1024, DType::fp16), {{"split_d", 2}, {"pass_cols", 640}})
          .find("split_d = 2 with pass_cols = 640"),
      std::string::npos);
  EXPECT_NE(
      f32->why_not(make_problem(1, 1, 1, 16, 16, 1024, DType::fp16), {{"split_d", 2}, {"warpgroups", 1}})
          .find("split_d = 2 with warpgroups = 1"),
      std::string::npos);
  EXPECT_NE(f32->why_not(make_problem(1, 1, 1, 16, 16, 1024, DType::fp16), {{"split_d", 2}, {"cluster", 2}})
                .find("split_d = 2 with cluster = 2"),
            std::string::npos);
  EXPECT_NE(f32->why_not(make_problem(1, 1, 1, 16, 16, 64, DType::fp16), {{"split_d", 2}})
                .find("split_d = 2 with head_dim = 64"),
            std::string::npos);
  Problem dv = make_problem(1, 1, 1, 16, 16, 512, DType::fp16);
  dv.head_dim_v = 256;
  EXPECT_NE(f32->why_not(dv, {}).find("head_dim_v = 256"), std::string::npos);
#endif
}

TEST(FfpaWgmmaSpec, PassesCoverDAndSharedMemoryFits) {
  constexpr int kH100 = 227 * 1024;
  for (int wgs : {1, 2}) {
    EXPECT_LE(fw::max_smem_bytes(false, wgs), kH100);
    if (wgs == 2) {
      EXPECT_LE(fw::max_smem_bytes(true, wgs), kH100);
    }
  }
  // Two one-warpgroup CTAs share an SM (228 KiB, 1 KiB of it reserved a CTA).
  EXPECT_LE(2 * (fw::max_smem_bytes(false, 1) + 1024), 228 * 1024);
  EXPECT_EQ(fw::passes_of(512, true), 1);
  EXPECT_EQ(fw::passes_of(576, true), 2);
  // acc_f16's 640-column kernel: one pass to D 640, the default from 544 with two warpgroups only.
  EXPECT_EQ(fw::passes_of(640, true, fw::Form::wide), 1);
  EXPECT_EQ(fw::passes_of(704, true, fw::Form::wide), 2);
  EXPECT_EQ(fw::pass_chunks(1024, true, fw::Form::wide), 8);
  EXPECT_FALSE(fw::wide_by_default(512, true, 2));
  EXPECT_TRUE(fw::wide_by_default(544, true, 2));
  EXPECT_TRUE(fw::wide_by_default(640, true, 2));
  EXPECT_FALSE(fw::wide_by_default(672, true, 2));
  EXPECT_FALSE(fw::wide_by_default(576, true, 1));
  // acc_f32's 320-column kernel: one pass to D 320, two to 640 by default; three to 960 by the knob only.
  EXPECT_TRUE(fw::wide_by_default(320, false, 2));
  EXPECT_FALSE(fw::wide_by_default(384, false, 2));
  EXPECT_TRUE(fw::wide_by_default(576, false, 2));
  EXPECT_FALSE(fw::wide_by_default(768, false, 2));
  EXPECT_FALSE(fw::wide_by_default(960, false, 2));
  EXPECT_FALSE(fw::wide_by_default(1024, false, 2));
  EXPECT_EQ(fw::passes_of(640, false, fw::Form::wide), 2);
  EXPECT_EQ(fw::passes_of(960, false, fw::Form::wide), 3);
  // Q resident up to D 576 on 128-key slots, 640 on the 96-key ones, 704 on the 64-key ones.
  EXPECT_EQ(fw::max_resident_head_dim(), 576);
  EXPECT_EQ(fw::max_resident_head_dim(fw::wide_bc(true)), 640);
  EXPECT_EQ(fw::max_resident_head_dim(fw::wide_bc(false)), 704);
  for (bool acc_f16 : {false, true}) {
    const int bc = fw::bc_of(fw::Form::wide, acc_f16);
    EXPECT_LE(fw::max_smem_bytes(false, 2, bc), kH100);
    EXPECT_LE(fw::max_smem_bytes(true, 2, bc), kH100);
    EXPECT_TRUE(fw::q_resident_by_default(fw::max_resident_head_dim(bc), 2, kH100, bc));
    EXPECT_FALSE(fw::q_resident_by_default(fw::max_resident_head_dim(bc) + 32, 2, kH100, bc));
    // The wide passes cover D exactly within their register budget, and the default saves a pass.
    for (int d = 32; d <= 1024; d += 32) {
      const int passes = fw::passes_of(d, acc_f16, fw::Form::wide),
                per = fw::pass_chunks(d, acc_f16, fw::Form::wide);
      EXPECT_GE(passes * per, fw::chunks_of(d)) << d;
      EXPECT_LT((passes - 1) * per, fw::chunks_of(d)) << d;
      EXPECT_LE(per * fw::kChunk, fw::wide_pass_cols(acc_f16)) << d;
      EXPECT_LE(fw::smem_bytes(d, fw::q_resident_by_default(d, 2, kH100, bc), 2, bc), kH100) << d;
      if (fw::wide_by_default(d, acc_f16, 2)) {
        EXPECT_LT(passes, fw::passes_of(d, acc_f16)) << d;
      }
    }
  }
  EXPECT_FALSE(fw::q_resident_by_default(608, 2, kH100));
  // The split form: a chunk for each warpgroup at every D above 64, Q resident beside at least four
  // slots, the passes' halves within a warpgroup's columns; acc_f16 one pass to D 1024, acc_f32 to 640.
  EXPECT_EQ(fw::passes_of(1024, true, fw::Form::split), 1);
  EXPECT_EQ(fw::passes_of(640, false, fw::Form::split), 1);
  EXPECT_EQ(fw::passes_of(704, false, fw::Form::split), 2);
  EXPECT_EQ(fw::split_ring_slots(1024, false), 4);
  EXPECT_EQ(fw::split_ring_slots(1024, true), 5);
  EXPECT_EQ(fw::split_ring_slots(128, true), 6);
  EXPECT_FALSE(fw::split_fits(64, true));
  for (bool acc_f16 : {false, true})
    for (int d = 96; d <= 1024; d += 32) {
      EXPECT_TRUE(fw::split_fits(d, acc_f16)) << d;
      EXPECT_LE(fw::split_smem_bytes(d, acc_f16), kH100) << d;
      const int passes = fw::passes_of(d, acc_f16, fw::Form::split),
                per = fw::pass_chunks(d, acc_f16, fw::Form::split);
      EXPECT_GE(passes * per, fw::chunks_of(d)) << d;
      EXPECT_LT((passes - 1) * per, fw::chunks_of(d)) << d;
      EXPECT_LE((per + 1) / 2 * fw::kChunk, fw::split_wg_cols(acc_f16)) << d;
    }
  // Which form the knobs give: the split form by default for acc_f32 at D 544-640 (one pass against two),
  // cluster mode for acc_f16 from D 672 (two passes); a knob asking for another form's shape keeps that form.
  const auto form = [](int d, bool acc_f16, fw::FormKnobs k, int wgs = 2) {
    return fw::form_of(d, acc_f16, wgs, k);
  };
  EXPECT_EQ(form(544, false, {}), fw::Form::split);
  EXPECT_EQ(form(640, false, {}), fw::Form::split);
  EXPECT_EQ(form(672, false, {}), fw::Form::passes);
  EXPECT_EQ(form(512, false, {}), fw::Form::passes);
  EXPECT_EQ(form(320, false, {}), fw::Form::wide);
  EXPECT_EQ(form(1024, true, {}), fw::Form::cluster);
  EXPECT_EQ(form(832, true, {.q_stream = 1}), fw::Form::cluster);
  EXPECT_EQ(form(800, true, {}), fw::Form::cluster);
  EXPECT_EQ(form(672, true, {}), fw::Form::cluster);
  EXPECT_EQ(form(672, true, {.pass_cols = 640}), fw::Form::wide);
  EXPECT_EQ(form(1024, true, {.cluster = 1}), fw::Form::passes);
  EXPECT_EQ(form(1024, false, {}), fw::Form::passes);
  EXPECT_EQ(form(640, true, {}), fw::Form::wide);
  EXPECT_EQ(form(640, false, {.q_stream = 1}), fw::Form::wide);
  EXPECT_EQ(form(640, false, {.pass_cols = 256}), fw::Form::passes);
  EXPECT_EQ(form(640, false, {.cluster = 2}), fw::Form::cluster);
  EXPECT_EQ(form(640, false, {.split_d = 1}), fw::Form::wide);
  EXPECT_EQ(form(640, false, {}, 1), fw::Form::passes);
  EXPECT_EQ(form(1024, true, {.split_d = 2}), fw::Form::split);
  EXPECT_EQ(form(256, false, {.split_d = 2}), fw::Form::split);
  EXPECT_EQ(fw::passes_of(256, false), 1);
  EXPECT_EQ(fw::passes_of(320, false), 2);
  EXPECT_EQ(fw::passes_of(1024, false), 4);
  for (bool acc_f16 : {false, true})
    for (int d = 32; d <= 1024; d += 32) {
      const int passes = fw::passes_of(d, acc_f16), per = fw::pass_chunks(d, acc_f16);
      // Every chunk of O belongs to exactly one pass, and no pass exceeds the register budget.
      EXPECT_GE(passes * per, fw::chunks_of(d)) << d;
      EXPECT_LT((passes - 1) * per, fw::chunks_of(d)) << d;
      EXPECT_LE(per * fw::kChunk, fw::max_pass_cols(acc_f16)) << d;
      // Q is resident exactly up to the largest D whose Q fits beside the ring, and only with 2 warpgroups.
      EXPECT_EQ(fw::q_resident_by_default(d, 2, kH100), d <= fw::kMaxResidentHeadDim) << d;
      EXPECT_FALSE(fw::q_resident_by_default(d, 1, kH100)) << d;
      if (fw::q_resident_by_default(d, 2, kH100)) {
        EXPECT_LE(fw::smem_bytes(d, true, 2), fw::max_smem_bytes(true, 2)) << d;
      }
      for (int wgs : {1, 2}) {
        EXPECT_EQ(fw::smem_bytes(d, false, wgs), fw::max_smem_bytes(false, wgs)) << d;  // constant in D
      }
      // Cluster mode (several passes): a cluster is the passes (at most kMaxClusterPasses), and Q streamed
      // always leaves a ring of at least 3 slots; so does Q resident for every acc_f32 D (4 chunks a CTA at
      // most) and for acc_f16 (8 chunks); every layout fits sm_90's shared memory.
      if (passes == 1) continue;
      EXPECT_LE(passes, fw::kMaxClusterPasses) << d;
      for (bool resident : {false, true}) {
        EXPECT_TRUE(fw::cluster_fits(d, acc_f16, resident)) << d << " " << resident;
        EXPECT_LE(fw::cluster_smem_bytes(d, acc_f16, resident), kH100) << d << " " << resident;
      }
      EXPECT_GE(fw::cluster_ring_slots(d, acc_f16, true), d <= 384 && !acc_f16 ? 5 : 3) << d;
    }
}

}  // namespace
