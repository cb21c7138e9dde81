// GPU tests for fa3.wgmma (kernels/fa3/, sm_90a): D 64/128/256 x fp16/bf16 over the fa2 family's shapes
// (S 1/17/128/1000/4097, Sq != Sk both ways, GQA 32/4 and MQA, causal, windows (64,0) and (128,128),
// odd B*H, rows that see no key); output poisoned with NaN first; error against the fp64 CPU oracle
// at most 2x cudnn.sdpa's on the same inputs (the engine's rule). Host checks of the spec, the tiles'
// shared memory and the TMA box shapes run everywhere. Timings: scripts/device/fa3_run.sh, docs/PERF.md.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/common/bshd_tensor_map.hpp"
#include "kernels/fa3/fa3_traits.hpp"
#include "kernels/fa3/fa3_work_order.hpp"
#include "kernels/registry.hpp"
#include "tests/support/fa2_family_suite.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/kernel_harness.hpp"

namespace {

using attn::DType;
using attn::Problem;
namespace f3 = attn::fa3;

using namespace attn::test;  // NOLINT(google-build-using-namespace): the shared harness

const attn::KernelSpec* fa3_spec(std::string& why) {
  return attn::sm90a_kernel("fa3.wgmma", ATTNSCOPE_HAS_FA3_WGMMA, why);
}

struct Fa3Case {
  std::string name;
  Problem problem;
  attn::Knobs knobs;
};

std::vector<Fa3Case> all_cases() {
  std::vector<Fa3Case> out;
  for (int d : f3::kHeadDims)
    for (DType t : {DType::fp16, DType::bf16}) {
      const std::string tag = shape_tag(d, t);
      auto add = [&](const std::string& n, const Problem& p) { out.push_back({tag + n, p, {}}); };
      for (const NamedProblem& s : fa2_family_shapes(d, t)) add(s.name, s.problem);
      // A long key range: 157 (D <= 128) or 313 (D = 256) tiles through the ring and the rescales.
      add("sq64_sk20000_causal_gqa", make_problem(1, 2, 1, 64, 20000, d, t, true));
      // Many more work items than SMs, over batches and KV sections: each persistent CTA runs ~10.
      add("b3_s2048_causal_gqa", make_problem(3, 24, 6, 2048, 2048, d, t, true));
      // Every compiled tile, not only the defaults: the band, tail and long-range paths.
      for (const f3::Tile& tile : f3::compiled_tiles(d)) {
        std::string knob_tag = "_bn";
        knob_tag += std::to_string(tile.bn);
        knob_tag += "_wg";
        knob_tag += std::to_string(tile.wgs);
        knob_tag += "_cl";
        knob_tag += std::to_string(tile.cluster);
        if (tile.q_buffers > 1) knob_tag += "_qb" + std::to_string(tile.q_buffers);
        if (tile.tma_store) knob_tag += "_tmastore";
        const attn::Knobs knobs = {{"bn", tile.bn},
                                   {"warpgroups", tile.wgs},
                                   {"cluster", tile.cluster},
                                   {"q_buffers", tile.q_buffers},
                                   {"epilogue", tile.tma_store ? 2 : 1}};
        const auto add_tiled = [&](const std::string& n, const Problem& p) {
          out.push_back({tag + n + knob_tag, p, knobs});
        };
        add_tiled("sq333_sk4097_full_gqa", make_problem(2, 6, 2, 333, 4097, d, t));
        if (tile.cluster == 1) {
          add_tiled("s1000_mqa_causal", make_problem(1, 5, 1, 1000, 1000, d, t, true));
          add_tiled("sq4097_sk333_win128_128", make_problem(1, 3, 3, 4097, 333, d, t, false, {128, 128}));
          continue;
        }
        // A cluster's pair of row blocks: an odd count leaves the last pair's second block past Sq; one
        // row block (S 1, 17); many pairs a cluster walks with its static stride; key tails of K/V
        // halves that lie wholly past Sk (Sk 40: the second CTA's half of the only tile).
        add_tiled("s1_full", make_problem(1, 3, 3, 1, 1, d, t));
        add_tiled("sq17_sk40_full", make_problem(3, 1, 1, 17, 40, d, t));
        add_tiled("sq4097_sk333_full_mqa", make_problem(1, 5, 1, 4097, 333, d, t));
        add_tiled("b3_s2048_full_gqa", make_problem(3, 24, 6, 2048, 2048, d, t));
        // Not persistent: one cluster a work item, the hardware dispatching them.
        attn::Knobs per_item = knobs;
        per_item["cta_per_item"] = 1;
        out.push_back({tag + "sq1000_sk777_full_mqa" + knob_tag + "_per_item",
                       make_problem(2, 3, 1, 1000, 777, d, t), per_item});
      }
    }
  return out;
}

class Fa3WgmmaTest : public ::testing::TestWithParam<Fa3Case> {};

TEST_P(Fa3WgmmaTest, MatchesOracleWithinTwiceCudnn) {
  ATTN_SKIP_WITHOUT_GPU();
  std::string why_skip;
  const attn::KernelSpec* spec = fa3_spec(why_skip);
  if (spec == nullptr) GTEST_SKIP() << why_skip;
  const Problem& p = GetParam().problem;
  const std::uint32_t seed = static_cast<std::uint32_t>(std::hash<std::string>{}(p.full_label()) + 3u);
  expect_within_twice_cudnn(*spec, p, GetParam().knobs, seed, GetParam().name);
}

std::string case_name(const ::testing::TestParamInfo<Fa3Case>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Fa3, Fa3WgmmaTest, ::testing::ValuesIn(all_cases()), case_name);

// Launches `p` with the default knobs once, then three more times and as three replays of a CUDA graph
// holding two launches (the timer's --graphs protocol), O poisoned before each: every one must give the
// first O bit for bit.
void expect_repeats_bit_for_bit(const Problem& p, std::uint32_t seed) {
  std::string why_skip;
  const attn::KernelSpec* spec = fa3_spec(why_skip);
  if (spec == nullptr) GTEST_SKIP() << why_skip;
  const Inputs in = make_inputs(p, seed);
  std::unique_ptr<attn::PreparedKernel> kernel = spec->prepare(p, {});
  TestStream stream;
  ASSERT_NE(stream.get(), nullptr);
  const attn::DeviceBuffer dq = attn::upload(in.q.values, p.dtype, stream.get());
  const attn::DeviceBuffer dk = attn::upload(in.k.values, p.dtype, stream.get());
  const attn::DeviceBuffer dv = attn::upload(in.v.values, p.dtype, stream.get());
  const attn::CaseBuffers b = attn::allocate_case_buffers(p, *kernel);
  const attn::AttentionArgs args = attn::make_args(p, dq.get(), dk.get(), dv.get(), b, stream.get());
  const auto n = static_cast<std::size_t>(p.o_elems());
  attn::run_once(*kernel, args, b);
  const std::vector<float> first = attn::download(b.o, p.dtype, n, stream.get());
  ASSERT_TRUE(std::all_of(first.begin(), first.end(), [](float x) { return std::isfinite(x); }));
  for (int launch = 0; launch < 3; ++launch) {
    attn::poison(b, stream.get());
    attn::run_once(*kernel, args, b);
    EXPECT_EQ(attn::download(b.o, p.dtype, n, stream.get()), first) << "launch " << launch + 2;
  }
  cudaGraph_t graph = nullptr;
  ASSERT_CUDA(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
  kernel->run(args);
  kernel->run(args);
  ASSERT_CUDA(cudaStreamEndCapture(stream.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    attn::poison(b, stream.get());
    ASSERT_CUDA(cudaGraphLaunch(exec, stream.get()));
    EXPECT_EQ(attn::download(b.o, p.dtype, n, stream.get()), first) << "graph replay " << replay + 1;
  }
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
}

// The work counter is zero before and after every launch: a counter left behind by a launch would
// make later CTAs find the list empty and leave O's poison in place. B2 H16/4 S2048 causal: 512 items.
TEST(Fa3WgmmaRepeat, EveryLaunchAndGraphReplayComputesTheWholeOutput) {
  ATTN_SKIP_WITHOUT_GPU();
  expect_repeats_bit_for_bit(make_problem(2, 16, 4, 2048, 2048, 128, DType::fp16, true), 11u);
}

// The clustered kernel (a full mask at D=128) walks a static list: every launch covers it all, every
// row of an odd count of row blocks (25: the last pair's second block past Sq) written.
TEST(Fa3WgmmaRepeat, ClusteredLaunchesRepeatBitForBit) {
  ATTN_SKIP_WITHOUT_GPU();
  ASSERT_EQ(f3::default_tile(128, false, 3100).cluster, 2);
  expect_repeats_bit_for_bit(make_problem(2, 16, 4, 3100, 3100, 128, DType::fp16), 12u);
}

// Scores that rise tile after tile (the key tiles run from the last down, and K's rows grow towards
// the first key): every row's running max rises by ~48 (log2 units) over its key tiles, so O and the
// sums are rescaled mid-row by factors far from 1, not only at the first tile, and a softmax that
// moves its reference only past a slack (2^8) still moves it several times. Q near all-ones, K's row
// j = a (Sk - j) / Sk plus noise.
void expect_rising_scores_within_twice_cudnn(int d, DType t, bool causal, const attn::Knobs& knobs) {
  std::string why_skip;
  const attn::KernelSpec* spec = fa3_spec(why_skip);
  if (spec == nullptr) GTEST_SKIP() << why_skip;
  const Problem p = make_problem(1, 4, 2, 2048, 2048, d, t, causal);
  Inputs in = make_inputs(p, 21u);
  const float a = 48.0f / (std::sqrt(static_cast<float>(d)) * 1.4426950f);
  for (float& x : in.q.values) x = attn::round_to(t, 1.0f + 0.05f * x);
  const auto sk = static_cast<std::size_t>(p.seq_kv), row = in.k.values.size() / sk;  // BSHD, B = 1
  for (std::size_t j = 0; j < sk; ++j)
    for (std::size_t e = 0; e < row; ++e) {
      float& x = in.k.values[j * row + e];
      x = attn::round_to(t, a * static_cast<float>(sk - j) / static_cast<float>(sk) + 0.05f * x);
    }
  expect_within_twice_cudnn(*spec, p, knobs, std::move(in), "rising scores");
}

TEST(Fa3WgmmaRescale, RisingScoresMoveTheReferenceMidRow) {
  ATTN_SKIP_WITHOUT_GPU();
  for (DType t : {DType::fp16, DType::bf16})
    for (bool causal : {false, true}) {
      for (int d : f3::kHeadDims) expect_rising_scores_within_twice_cudnn(d, t, causal, {});
      expect_rising_scores_within_twice_cudnn(64, t, causal, {{"warpgroups", 2}});
    }
}

// Host-only from here.

TEST(Fa3WgmmaSpec, RefusesWhatItDoesNotCompileNamingTheField) {
  const attn::KernelSpec* spec = attn::find_kernel("fa3.wgmma");
  ASSERT_NE(spec, nullptr);
  if (!ATTNSCOPE_HAS_FA3_WGMMA) {
    EXPECT_NE(spec->why_not(make_problem(1, 1, 1, 16, 16, 128, DType::fp16), {}).find("no 90a target"),
              std::string::npos);
    return;
  }
  EXPECT_EQ(spec->why_not(make_problem(2, 8, 2, 1000, 333, 128, DType::bf16, true), {}), "");
  EXPECT_NE(spec->why_not(make_problem(1, 1, 1, 16, 16, 96, DType::fp16), {}).find("head_dim = 96"),
            std::string::npos);
  EXPECT_NE(spec->why_not(make_problem(1, 1, 1, 16, 16, 128, DType::fp32), {}).find("dtype = fp32"),
            std::string::npos);
  Problem dv = make_problem(1, 1, 1, 16, 16, 128, DType::fp16);
  dv.head_dim_v = 64;
  EXPECT_NE(spec->why_not(dv, {}).find("head_dim_v = 64"), std::string::npos);
  // Masks it does not implement are refused through the capability flags, before its own rules.
  Problem cmp = make_problem(1, 1, 1, 256, 1, 64, DType::fp16);
  cmp.compress = {32, 16};
  cmp.seq_kv = cmp.compress.blocks_at(255);
  EXPECT_NE(attn::kernel_why_not(*spec, cmp, {}), "");
}

TEST(Fa3WgmmaSpec, TilesFitHoppersSharedMemoryAndRegisters) {
  constexpr int kH100OptIn = 232448;  // 227 KiB a block
  for (int d : f3::kHeadDims)
    for (const f3::Tile& t : f3::compiled_tiles(d)) {
      const std::string what = "D=" + std::to_string(d) + " bn " + std::to_string(t.bn);
      EXPECT_LE(f3::smem_bytes(d, t), kH100OptIn) << what;
      EXPECT_GE(t.stages, 2) << what;
      EXPECT_EQ(t.bn % 16, 0) << what;  // whole k16 slices of P V
      // O (D/2), S (bn/2) and P (bn/4) registers with room for addresses and the softmax state.
      EXPECT_LE(d / 2 + t.bn / 2 + t.bn / 4, f3::consumer_regs(t) - 24) << what;
      EXPECT_LE(128 * f3::producer_regs(t) + 128 * t.wgs * f3::consumer_regs(t), 65536) << what;
    }
  // Each default is compiled, and the band or the key count changes it only where the traits say so
  // (D=128).
  for (int d : f3::kHeadDims)
    for (bool band : {false, true})
      for (int sk : {1, f3::kLongKeys - 1, f3::kLongKeys, 8192}) {
        const f3::Tile t = f3::default_tile(d, band, sk);
        bool compiled = false;
        for (const f3::Tile& c : f3::compiled_tiles(d)) compiled = compiled || c == t;
        EXPECT_TRUE(compiled) << "D=" << d << " band " << band << " Sk " << sk;
        if (d != 128) {
          EXPECT_EQ(t, f3::default_tile(d, band, 1)) << "D=" << d << " Sk " << sk;
        }
      }
  EXPECT_EQ(f3::default_tile(128, false, 8192).bn, 176);
  EXPECT_EQ(f3::default_tile(128, false, f3::kLongKeys).bn, 176);
  EXPECT_EQ(f3::default_tile(128, false, 2048), (f3::Tile{128, 2, 2, 2, 2, true}));
  EXPECT_EQ(f3::default_tile(128, true, 8192), (f3::Tile{128, 2, 2, 1, 2, true}));
  // Clusters for full masks at D=128 and 256 only, in halves of whole 8-row swizzle atoms.
  EXPECT_EQ(f3::default_tile(128, false, 8192).cluster, 2);
  EXPECT_EQ(f3::default_tile(256, false, 8192).cluster, 2);
  EXPECT_EQ(f3::default_tile(64, false, 8192).cluster, 1);
  for (int d : f3::kHeadDims) {
    EXPECT_EQ(f3::default_tile(d, true, 8192).cluster, 1) << "D=" << d;
    for (const f3::Tile& t : f3::compiled_tiles(d))
      EXPECT_EQ(t.bn / t.cluster % 8, 0) << "D=" << d << " bn " << t.bn;
  }
  // Two Q buffers only where they fit beside the ring (the first loop checks every tile's bytes).
  EXPECT_EQ(f3::default_tile(64, false, 8192).q_buffers, 2);
  EXPECT_EQ(f3::default_tile(256, false, 2048).q_buffers, 1);
}

TEST(Fa3WgmmaSpec, WorkSectionsKeepTheirKeysAndValuesWithinL2) {
  // D=128, Sk=8192: 4 MiB of K and V a head, so 4 heads a 16 MiB section; GQA groups of 8 share theirs.
  EXPECT_EQ(f3::section_heads(8192, 128, 1, 256), 4);
  EXPECT_EQ(f3::section_heads(8192, 128, 8, 256), 32);
  EXPECT_EQ(f3::section_heads(2048, 64, 1, 1000), 32);  // 512 KiB a head
  EXPECT_EQ(f3::section_heads(2048, 64, 1, 10), 10);    // no more than there are
  EXPECT_EQ(f3::section_heads(1 << 22, 256, 1, 4), 1);  // one head larger than L2: one a section
}

// Every (row block, head, batch) exactly once; inside a section (per_section heads, the last one
// shorter) row blocks from the last down, each over the section's heads, and sections in head order.
TEST(Fa3WgmmaSpec, WorkListIsEveryItemOnceHeaviestFirstBySection) {
  struct Shape {
    int m_blocks, heads_q, batch, per_section;
  };
  for (const Shape& sh : {Shape{64, 16, 2, 4}, Shape{16, 16, 8, 16}, Shape{33, 5, 3, 4}, Shape{1, 1, 1, 1},
                          Shape{7, 3, 1, 2}, Shape{5, 4, 1, 64}}) {
    const std::string what = "m_blocks " + std::to_string(sh.m_blocks) + ", heads " +
                             std::to_string(sh.heads_q) + " x " + std::to_string(sh.batch) + ", section " +
                             std::to_string(sh.per_section);
    const int pairs = sh.heads_q * sh.batch, n = sh.m_blocks * pairs;
    const int per_section = std::min(sh.per_section, pairs);  // as the kernel's caller clamps it
    std::vector<int> seen(static_cast<std::size_t>(n), 0);
    int prev_section = -1, prev_m = 0;
    for (int w = 0; w < n; ++w) {
      const f3::WorkItem it = f3::work_item(w, sh.m_blocks, sh.heads_q, sh.batch, per_section);
      ASSERT_TRUE(it.m_block >= 0 && it.m_block < sh.m_blocks && it.h >= 0 && it.h < sh.heads_q &&
                  it.b >= 0 && it.b < sh.batch)
          << what << ", item " << w;
      ++seen[static_cast<std::size_t>((it.b * sh.heads_q + it.h) * sh.m_blocks + it.m_block)];
      const int section = (it.b * sh.heads_q + it.h) / per_section;
      if (section == prev_section) {
        EXPECT_LE(it.m_block, prev_m) << what << ", item " << w;
      } else {
        EXPECT_EQ(section, prev_section + 1) << what << ", item " << w;
        EXPECT_EQ(it.m_block, sh.m_blocks - 1) << what << ": a section starts with its heaviest row block";
      }
      prev_section = section;
      prev_m = it.m_block;
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), n) << what;
  }
}

TEST(Fa3WgmmaSpec, KnobsPickACompiledTileOrSayWhichAre) {
  const attn::KernelSpec* spec = attn::find_kernel("fa3.wgmma");
  ASSERT_NE(spec, nullptr);
  if (!ATTNSCOPE_HAS_FA3_WGMMA) GTEST_SKIP() << "fa3.wgmma not built: no 90a target";
  const Problem p = make_problem(1, 2, 2, 512, 512, 128, DType::fp16);
  EXPECT_EQ(spec->why_not(p, {{"bn", 128}}), "");
  EXPECT_EQ(spec->why_not(p, {{"bn", 176}, {"warpgroups", 2}}), "");
  const std::string why = spec->why_not(p, {{"bn", 80}});
  EXPECT_NE(why.find("knobs bn = 80, warpgroups = 2, cluster = 1"), std::string::npos) << why;
  EXPECT_NE(why.find("(176, 2, 2, 1) (128, 2, 2, 2, TMA stores) (128, 2, 1, 2) (176, 2, 1, 1) (128, 2, 1, 1) "
                     "(128, 2, 2, 2) (128, 2, 1, 2, TMA stores)"),
            std::string::npos)
      << why;
  EXPECT_NE(spec->why_not(p, {{"warpgroups", 3}}).find("warpgroups = 3"), std::string::npos);
  const Problem p64 = make_problem(1, 2, 2, 512, 512, 64, DType::bf16);
  EXPECT_EQ(spec->why_not(p64, {{"warpgroups", 3}}), "");
  // Q buffers: D=64's default takes two, one on request; another tile than the default's goes back to
  // one unless asked (D=64 with two warpgroups is compiled with one only); D=128's bn 176 has no room.
  // p has 512 keys: D=128's default there is bn 128, clustered, two Q buffers.
  EXPECT_EQ(spec->why_not(p64, {{"q_buffers", 1}}), "");
  EXPECT_EQ(spec->why_not(p64, {{"warpgroups", 2}}), "");
  EXPECT_NE(spec->why_not(p64, {{"warpgroups", 2}, {"q_buffers", 2}}).find("q_buffers = 2"),
            std::string::npos);
  EXPECT_EQ(spec->why_not(p, {{"bn", 128}, {"cluster", 2}, {"q_buffers", 2}}), "");
  const std::string no_room = spec->why_not(p, {{"bn", 176}, {"cluster", 2}, {"q_buffers", 2}});
  EXPECT_NE(no_room.find("bn = 176, warpgroups = 2, cluster = 2, q_buffers = 2"), std::string::npos)
      << no_room;
  // The epilogue: TMA stores by default on D=128's clustered bn 128 tile (p's default), stores from
  // registers on request; TMA stores refused where they are not compiled (bn 176).
  EXPECT_EQ(spec->why_not(p, {{"epilogue", 1}}), "");
  EXPECT_EQ(spec->why_not(p, {{"epilogue", 2}}), "");
  EXPECT_EQ(spec->why_not(p64, {{"epilogue", 2}}), "");
  const std::string no_tma = spec->why_not(p, {{"bn", 176}, {"cluster", 2}, {"epilogue", 2}});
  EXPECT_NE(no_tma.find("q_buffers = 1, epilogue = 2 (TMA stores)"), std::string::npos) << no_tma;
  // Clusters: on request for a full mask, refused with a band (naming the knob and the mask), and not
  // compiled for every tile.
  EXPECT_EQ(spec->why_not(p, {{"cluster", 2}}), "");
  EXPECT_EQ(spec->why_not(p, {{"cluster", 1}}), "");
  const std::string banded =
      spec->why_not(make_problem(1, 2, 2, 512, 512, 256, DType::fp16, true), {{"cluster", 2}});
  EXPECT_NE(banded.find("knob cluster = 2"), std::string::npos) << banded;
  EXPECT_NE(banded.find("causal mask"), std::string::npos) << banded;
  const std::string windowed =
      spec->why_not(make_problem(1, 2, 2, 512, 512, 128, DType::fp16, false, {64, 0}), {{"cluster", 2}});
  EXPECT_NE(windowed.find("a window"), std::string::npos) << windowed;
  const std::string uncompiled = spec->why_not(p, {{"bn", 128}, {"cluster", 2}, {"q_buffers", 1}});
  EXPECT_NE(uncompiled.find("bn = 128, warpgroups = 2, cluster = 2, q_buffers = 1"), std::string::npos)
      << uncompiled;
  EXPECT_NE(spec->why_not(p, {{"cluster", 3}}).find("cluster"), std::string::npos);
}

TEST(Fa3WgmmaSpec, TmaBoxesAreOneHeadsRowsBy64Columns) {
  // Q of [B=2, S=1000, H=32, D=128]: dims innermost first, byte strides of D, H and S.
  const attn::tma_map::BshdBoxes q = attn::tma_map::bshd_boxes(2, 1000, 32, 128, 128);
  EXPECT_EQ(q.dims[0], 128u);
  EXPECT_EQ(q.dims[1], 32u);
  EXPECT_EQ(q.dims[2], 1000u);
  EXPECT_EQ(q.dims[3], 2u);
  EXPECT_EQ(q.strides[0], 256u);              // one head's row
  EXPECT_EQ(q.strides[1], 256u * 32);         // one sequence position
  EXPECT_EQ(q.strides[2], 256u * 32 * 1000);  // one batch
  EXPECT_EQ(q.box[0], 64u);                   // 128 bytes: one swizzle atom
  EXPECT_EQ(q.box[1], 1u);
  EXPECT_EQ(q.box[2], 128u);
  EXPECT_EQ(q.box[3], 1u);
  const attn::tma_map::BshdBoxes k = attn::tma_map::bshd_boxes(1, 4097, 4, 256, 80);
  EXPECT_EQ(k.box[2], 80u);
  EXPECT_EQ(k.strides[1], 512u * 4);
}

}  // namespace
