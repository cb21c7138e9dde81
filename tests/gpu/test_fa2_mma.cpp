// GPU tests for fa2.mma (kernels/fa2/): every head dim and both dtypes over S 1/17/128/1000/4097,
// Sq != Sk both ways, GQA 32/4 and MQA, causal, windows (64,0) and (128,128), odd B*H; output
// poisoned with NaN first; error against the fp64 CPU oracle at most 2x cudnn.sdpa's on the same
// inputs (the engine's rule); every compiled tile checked and timed; host checks of the spec.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/api/half_convert.hpp"
#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/select_file.hpp"
#include "kernels/fa2/fa2_traits.hpp"
#include "kernels/registry.hpp"
#include "tests/support/fa2_family_suite.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/kernel_harness.hpp"

namespace attn {
KernelSpec make_fa2_mma_spec();
KernelSpec make_cudnn_sdpa_spec();
}  // namespace attn

namespace {

using attn::DType;
using attn::Problem;

using namespace attn::test;  // NOLINT(google-build-using-namespace): the shared harness

struct Fa2Case {
  std::string name;
  Problem problem;
};

// Per (D, dtype): the shapes of the list. B*H is odd wherever the heads allow it.
std::vector<Fa2Case> all_cases() {
  std::vector<Fa2Case> out;
  for (int d : attn::fa2::kHeadDims)
    for (DType t : {DType::fp16, DType::bf16}) {
      const std::string tag = shape_tag(d, t);
      auto add = [&](const std::string& n, const Problem& p) { out.push_back({tag + n, p}); };
      for (const NamedProblem& s : fa2_family_shapes(d, t)) add(s.name, s.problem);
      // NSA's compressed branch (Sk = its blocks): overlapping (32, 16) and disjoint (64, 64).
      auto compressed = [&](std::int64_t hq, std::int64_t hkv, std::int64_t sq, std::int64_t l,
                            std::int64_t s) {
        Problem p = make_problem(1, hq, hkv, sq, 1, d, t);
        p.compress = {l, s};
        p.seq_kv = p.compress.blocks_at(sq - 1);
        return p;
      };
      add("s1000_cmp32_16", compressed(3, 3, 1000, 32, 16));
      add("s4097_cmp64_64_gqa", compressed(32, 4, 4097, 64, 64));
      add("s8192_cmp8_4", compressed(2, 1, 8192, 8, 4));
      // NSA's selected branch: GQA groups sharing a draw, a partial last query block, blocks of
      // several tiles (l' = 128, 256), n past the query blocks (plain causal), one block (the diagonal).
      auto selected = [&](std::int64_t hq, std::int64_t hkv, std::int64_t s, attn::Select sel) {
        Problem p = make_problem(1, hq, hkv, s, s, d, t);
        p.select = sel;
        return p;
      };
      add("s4097_sel64x16_gqa", selected(32, 4, 4097, {64, 16, 0}));
      add("s8192_sel128x8s3", selected(4, 2, 8192, {128, 8, 3}));
      add("s1000_sel256x2_mqa", selected(3, 1, 1000, {256, 2, 1}));
      add("s2048_sel64x64", selected(3, 3, 2048, {64, 64, 0}));
      add("s777_sel64x1", selected(3, 3, 777, {64, 1, 0}));
    }
  return out;
}

class Fa2MmaTest : public ::testing::TestWithParam<Fa2Case> {};

TEST_P(Fa2MmaTest, MatchesOracleWithinTwiceCudnn) {
  ATTN_SKIP_WITHOUT_GPU();
  const Problem& p = GetParam().problem;
  // A fresh draw per case: the seed follows the case's shape and mask.
  const std::uint32_t seed = static_cast<std::uint32_t>(std::hash<std::string>{}(p.full_label()));
  expect_within_twice_cudnn(attn::make_fa2_mma_spec(), p, {}, seed, GetParam().name);
}

std::string case_name(const ::testing::TestParamInfo<Fa2Case>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Fa2, Fa2MmaTest, ::testing::ValuesIn(all_cases()), case_name);

// Every compiled tile of the three FA2-paper head dims against the oracle on a ragged causal and a
// full shape, timed (median of 20 launches) at B*S = 16384, H = 2048 / D, S = 4096: the numbers
// docs/PERF.md keeps next to each tile choice.
struct TileCase {
  int d;
  attn::fa2::TileConfig tiles;
  bool causal;
};

class Fa2TileTest : public ::testing::TestWithParam<TileCase> {};

TEST_P(Fa2TileTest, EveryCompiledTileIsCorrectAndTimed) {
  ATTN_SKIP_WITHOUT_GPU();
  const auto& [d, tiles, causal] = GetParam();
  const attn::Knobs knobs{
      {"br", tiles.br}, {"bc", tiles.bc}, {"warps", tiles.warps}, {"stages", tiles.stages}};
  const attn::KernelSpec spec = attn::make_fa2_mma_spec();
  // Correctness at a ragged shape (tails on both axes, GQA).
  {
    const Problem p = make_problem(1, 6, 2, 333, 1001, d, DType::fp16, causal);
    const Inputs in = make_inputs(p, 7u + static_cast<std::uint32_t>(d));
    RunOutput got;
    run_kernel(spec, p, knobs, in, 0, got);
    if (HasFatalFailure()) return;
    const Oracle ref = oracle_rows(p, in);
    const Errors e = compare(p, ref, got);
    EXPECT_LE(e.rel_l2, dtype_bound(p.dtype)) << attn::fa2::to_string(tiles) << " " << p.full_label();
    for (float x : got.o) ASSERT_FALSE(std::isnan(x)) << attn::fa2::to_string(tiles);
  }
  // Timing at the fa2-tokens16k shape with S = 4096.
  const std::int64_t s = 4096;
  const Problem p = make_problem(16384 / s, 2048 / d, 2048 / d, s, s, d, DType::fp16, causal);
  const Inputs in = make_inputs(p, 11u);
  RunOutput got;
  run_kernel(spec, p, knobs, in, 20, got);
  if (HasFatalFailure()) return;
  const double tflops = p.flops() / (got.ms * 1e-3) / 1e12;
  std::cout << "[fa2.tiles] D=" << d << " " << (causal ? "causal" : "full") << " tiles "
            << attn::fa2::to_string(tiles) << ": " << got.ms << " ms, " << tflops << " TFLOPS\n";
  EXPECT_GT(tflops, 0.0);
}

std::vector<TileCase> tile_cases() {
  std::vector<TileCase> out;
  for (int d : {64, 128, 256})
    for (const auto& t : attn::fa2::compiled_tiles(d))
      for (bool causal : {false, true})
        if (!causal || !attn::fa2::is_tight(d, t)) out.push_back({d, t, causal});  // tight: no band mask
  return out;
}

std::string tile_name(const ::testing::TestParamInfo<TileCase>& info) {
  const auto& c = info.param;
  std::string name = "d";
  for (int v : {c.d, c.tiles.br, c.tiles.bc, c.tiles.warps, c.tiles.stages}) {
    name += std::to_string(v);
    name += 'x';
  }
  name += c.causal ? "causal" : "full";
  return name;
}

INSTANTIATE_TEST_SUITE_P(Fa2, Fa2TileTest, ::testing::ValuesIn(tile_cases()), tile_name);

// Host-only: the spec's refusals name the field and what is allowed; the registry lists fa2.mma.
TEST(Fa2MmaSpec, RefusesWhatItDoesNotCompile) {
  const attn::KernelSpec spec = attn::make_fa2_mma_spec();
  ASSERT_NE(attn::find_kernel("fa2.mma"), nullptr);
  EXPECT_EQ(spec.why_not(make_problem(2, 4, 2, 100, 300, 128, DType::bf16, true), {}), "");
  Problem p32 = make_problem(1, 1, 1, 16, 16, 64, DType::fp32);
  EXPECT_NE(spec.why_not(p32, {}).find("dtype = fp32"), std::string::npos);
  EXPECT_NE(spec.why_not(make_problem(1, 1, 1, 16, 16, 80, DType::fp16), {}).find("head_dim = 80"),
            std::string::npos);
  Problem dv = make_problem(1, 1, 1, 16, 16, 64, DType::fp16);
  dv.head_dim_v = 32;
  EXPECT_NE(spec.why_not(dv, {}).find("head_dim_v = 32"), std::string::npos);
  const std::string bad_knob = spec.why_not(make_problem(1, 1, 1, 16, 16, 128, DType::fp16), {{"bc", 16}});
  EXPECT_NE(bad_knob.find("not compiled for D=128"), std::string::npos) << bad_knob;
  EXPECT_NE(bad_knob.find("128x32x4w s2"), std::string::npos) << bad_knob;
  // The tight tile (D=128 128x64) is compiled without the band mask: refused for causal and windowed
  // problems with the reason, while the causal default is another tile.
  const attn::Knobs tight{{"br", 128}, {"bc", 64}, {"warps", 4}, {"stages", 2}};
  EXPECT_EQ(spec.why_not(make_problem(1, 1, 1, 16, 16, 128, DType::fp16), tight), "");
  const std::string causal_tight = spec.why_not(make_problem(1, 1, 1, 16, 16, 128, DType::fp16, true), tight);
  EXPECT_NE(causal_tight.find("compiled without the band mask"), std::string::npos) << causal_tight;
  EXPECT_NE(spec.why_not(make_problem(1, 1, 1, 16, 16, 128, DType::fp16, false, {64, 0}), tight)
                .find("without the band mask"),
            std::string::npos);
  EXPECT_EQ(spec.why_not(make_problem(1, 1, 1, 16, 16, 128, DType::fp16, true), {}), "");
  // Every compiled tile is a legal knob combination; zero knobs take the default.
  for (int d : attn::fa2::kHeadDims)
    for (const auto& t : attn::fa2::compiled_tiles(d))
      EXPECT_EQ(spec.why_not(make_problem(1, 1, 1, 16, 16, d, DType::fp16),
                             {{"br", t.br}, {"bc", t.bc}, {"warps", t.warps}, {"stages", t.stages}}),
                "")
          << d << " " << attn::fa2::to_string(t);
}

TEST(Fa2MmaSpec, DefaultTilesFitAndSayWhy) {
  for (int d : attn::fa2::kHeadDims) {
    const auto c = attn::fa2::default_tiles(d, DType::fp16, false, 90, 227 * 1024);
    EXPECT_EQ(c.tiles, attn::fa2::compiled_tiles(d)[0]) << d;
    EXPECT_LE(attn::fa2::smem_bytes(d, c.tiles), 227 * 1024) << d;
    EXPECT_GT(std::string(c.reason).size(), 10u) << d;
  }
  // With the band mask every head dim gets a tile compiled with it.
  for (int d : attn::fa2::kHeadDims) {
    const auto c = attn::fa2::default_tiles(d, DType::fp16, true, 90, 227 * 1024);
    EXPECT_FALSE(attn::fa2::is_tight(d, c.tiles)) << d;
  }
  EXPECT_EQ(attn::fa2::default_tiles(128, DType::fp16, true, 90, 227 * 1024).tiles,
            (attn::fa2::TileConfig{128, 32, 4, 2}));
  EXPECT_TRUE(attn::fa2::is_tight(128, attn::fa2::compiled_tiles(128)[0]));
  // sm_89 (99 KiB a block): whatever is chosen for D=256 fits.
  const auto small = attn::fa2::default_tiles(256, DType::fp16, false, 89, 99 * 1024);
  EXPECT_LE(attn::fa2::smem_bytes(256, small.tiles), 99 * 1024);
}

// The shared-memory row layout: each row's chunks are a permutation; ldmatrix's 8 consecutive rows
// at one logical chunk hit 8 distinct 16-byte bank groups; in a swizzled row every 128-byte global
// line lands in one 128-byte smem line (what keeps a warp's cp.async at whole-line L2 requests); and
// the loader's per-pass XOR equals the row offset for 4 or 8k rows a pass.
TEST(Fa2MmaSpec, SmemRowLayout) {
  using attn::fa2::smem_chunk;
  for (int d : attn::fa2::kHeadDims)
    for (const auto& t : attn::fa2::compiled_tiles(d)) {
      const bool swz = attn::fa2::is_swizzled(d, t);
      EXPECT_EQ(swz, d % 64 == 0 && !attn::fa2::is_tight(d, t)) << d;
      const int chunks = d / 8, stride = attn::fa2::smem_row_elems(d, t) * 2;
      for (int r = 0; r < 16; ++r) {
        std::vector<int> seen(static_cast<std::size_t>(chunks), 0);
        for (int c = 0; c < chunks; ++c) {
          const int pc = smem_chunk(swz, r, c);
          ASSERT_TRUE(pc >= 0 && pc < chunks) << d << " r" << r << " c" << c;
          ++seen[static_cast<std::size_t>(pc)];
          if (swz) {
            EXPECT_EQ((r * stride + pc * 16) / 128, (r * stride + (c / 8) * 128) / 128)
                << d << " r" << r << " c" << c;
          }
        }
        EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), chunks) << d << " r" << r;
      }
      for (int c = 0; c < chunks; ++c)
        for (int r0 = 0; r0 < 32; r0 += 8) {
          std::vector<int> groups;
          for (int r = r0; r < r0 + 8; ++r)
            groups.push_back((r * stride + smem_chunk(swz, r, c) * 16) / 16 % 8);
          std::sort(groups.begin(), groups.end());
          EXPECT_EQ(std::unique(groups.begin(), groups.end()), groups.end())
              << d << " c" << c << " r0 " << r0;
        }
    }
  for (int rows_per_pass : {4, 8, 16})
    for (int row = 0; row < 64; ++row)
      for (int pass = 0; pass < 8; ++pass)
        EXPECT_EQ((row + pass * rows_per_pass) & 7, (row & 7) ^ ((pass * rows_per_pass) & 7));
}

// The selected branch from a file: rows that lack their diagonal block, rows with no block at all,
// blocks of two key tiles (l' = 128), GQA groups with tables of their own.
TEST(Fa2MmaSelectFile, IrregularTablesMatchTheOracle) {
  ATTN_SKIP_WITHOUT_GPU();
  const std::string path = (std::filesystem::temp_directory_path() / "attnscope-fa2-select.txt").string();
  Problem shape = make_problem(2, 8, 2, 1500, 1500, 64, DType::fp16);
  shape.select.block = 128;
  shape.select.count = 4;
  const std::int64_t nqb = shape.select.query_blocks(1500);  // 12, the last of 92 rows
  std::mt19937 rng(7);
  {
    std::ofstream f(path);
    for (std::int64_t row = 0; row < 2 * 2 * nqb; ++row) {
      // Up to 4 distinct causal blocks, each taken a third of the time, written descending (the
      // reader sorts them); every fifth row none at all.
      const std::int64_t qb = row % nqb;
      int written = 0;
      for (std::int64_t kb = qb; kb >= 0 && written < 4 && row % 5 != 0; --kb)
        if (rng() % 3 == 0) {
          f << kb << ' ';
          ++written;
        }
      for (; written < 4; ++written) f << "-1 ";
      f << '\n';
    }
  }
  for (const int d : {64, 128})
    for (const DType t : {DType::fp16, DType::bf16}) {
      Problem p = shape;
      p.head_dim = p.head_dim_v = d;
      p.dtype = t;
      const attn::SelectFileTable table = attn::read_select_file(path, p);
      p.select.file = path;
      p.select.file_sha256 = table.sha256;
      p.select.file_pairs = table.pairs;
      ASSERT_EQ(p.validate(), "");
      OracleRun run;
      run_against_oracle(attn::make_fa2_mma_spec(), p, {}, 11, run);
      if (HasFatalFailure()) return;
      std::cout << "[fa2.mma] select file D=" << d << " " << attn::to_string(t) << ": rel_l2 "
                << run.err.rel_l2 << ", LSE max abs " << run.err.lse_max_abs << ", rows checked "
                << run.ref.rows.size() << "\n";
      EXPECT_LE(run.err.rel_l2, dtype_bound(t)) << p.full_label();
      EXPECT_LE(run.err.lse_max_abs, 8.0 * dtype_bound(t)) << p.full_label();
    }
}

}  // namespace
