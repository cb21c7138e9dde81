// GPU tests for the kernels that read varlen batches' packed rows, fa2.mma and cudnn.sdpa (its
// forward, through ragged offsets): per-sequence lengths 1..4097 mixed, GQA, causal, windows, Sq != Sk
// per sequence. The kernel runs once on the packed batch, and each sequence's rows are checked
// against the fp64 oracle run on that sequence alone as a dense batch-1 problem, so the check shares
// neither the kernel's prefix sums nor the engine's packing. Their varlen backwards are checked by the
// backward conformance matrix (tests/support/conformance.hpp). Host checks of the varlen rules in
// the kernels' why_not run without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/cpu/cpu_reference.hpp"
#include "kernels/fa2/fa2_traits.hpp"
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

struct VarlenCase {
  std::string name;
  std::string kernel;
  Problem problem;
};

Problem varlen(std::int64_t hq, std::int64_t hkv, std::vector<std::int64_t> q, std::vector<std::int64_t> kv,
               int d, DType t, bool causal, attn::Window w = {}) {
  Problem p = make_problem(1, hq, hkv, 1, 1, d, t, causal, w);
  p.batch = static_cast<std::int64_t>(q.size());
  p.seq_q = *std::max_element(q.begin(), q.end());
  p.seq_kv = *std::max_element(kv.begin(), kv.end());
  p.varlen.q = std::move(q);
  p.varlen.kv = std::move(kv);
  return p;
}

std::vector<VarlenCase> varlen_cases() {
  // Lengths 1..4097: single rows, tile edges +-1 (Br = 64/128, Bc = 32/64/128) and long sequences.
  const std::vector<std::int64_t> mixed = {1, 4097, 17, 128, 1000, 2, 513, 64, 4096, 255, 130, 33};
  std::vector<VarlenCase> out;
  for (const std::string kernel : {"fa2.mma", "cudnn.sdpa"})
    for (int d : {32, 64, 96, 128, 160, 256})
      for (DType t : {DType::fp16, DType::bf16}) {
        const bool fa2 = kernel == "fa2.mma";
        if (!fa2 && d != 64 && d != 128) continue;
        std::string tag = (fa2 ? "fa2_mma_d" : "cudnn_sdpa_d") + std::to_string(d) + "_" +
                          std::string(attn::to_string(t)) + "_";
        auto add = [&](const std::string& n, const Problem& p) { out.push_back({tag + n, kernel, p}); };
        add("mixed_gqa82_causal", varlen(8, 2, mixed, mixed, d, t, true));
        if (d != 64 && d != 128) continue;
        add("mixed_gqa82_full", varlen(8, 2, mixed, mixed, d, t, false));
        add("mixed_mqa31_win64_0", varlen(3, 1, mixed, mixed, d, t, false, {64, 0}));
        // Sq != Sk per sequence, both ways: the diagonal is each sequence's bottom-right corner, and
        // causal rows above it (Sq > Sk) see no key. cuDNN's one band takes such batches unmasked only.
        if (fa2) {
          add("ragged_qkv_causal",
              varlen(4, 2, {1, 130, 4097, 64, 700}, {300, 130, 17, 1, 2000}, d, t, true));
          add("ragged_qkv_win128_128",
              varlen(4, 4, {1000, 5, 257}, {40, 3000, 257}, d, t, false, {128, 128}));
          // NSA's compressed branch per sequence: keys are each sequence's blocks (one unseen key
          // row for a sequence shorter than l).
          for (const attn::Compress c : {attn::Compress{32, 16}, attn::Compress{8, 4}}) {
            std::vector<std::int64_t> kv;
            for (const std::int64_t n : mixed) kv.push_back(c.key_rows(n));
            Problem p = varlen(8, 2, mixed, kv, d, t, false);
            p.compress = c;
            add("mixed_gqa82_cmp" + std::to_string(c.block) + "_" + std::to_string(c.stride), p);
          }
        } else {
          add("ragged_qkv_full", varlen(4, 2, {1, 130, 4097, 64, 700}, {300, 130, 17, 1, 2000}, d, t, false));
        }
      }
  return out;
}

attn::KernelSpec spec_of(const std::string& kernel) {
  return kernel == "fa2.mma" ? attn::make_fa2_mma_spec() : attn::make_cudnn_sdpa_spec();
}

class VarlenKernelTest : public ::testing::TestWithParam<VarlenCase> {};

TEST_P(VarlenKernelTest, EverySequenceMatchesItsOwnDenseOracle) {
  ATTN_SKIP_WITHOUT_GPU();
  const Problem& p = GetParam().problem;
  ASSERT_EQ(p.validate(), "");
  const attn::KernelSpec spec = spec_of(GetParam().kernel);
  const std::uint32_t seed = static_cast<std::uint32_t>(std::hash<std::string>{}(GetParam().name));
  const Inputs in = make_inputs(p, seed);
  RunOutput got;
  run_kernel(spec, p, {}, in, 0, got);
  if (HasFatalFailure()) return;
  ASSERT_EQ(got.o.size(), static_cast<std::size_t>(p.o_elems()));
  ASSERT_EQ(got.lse.size(), static_cast<std::size_t>(p.lse_elems()));

  const std::int64_t hq = p.heads_q, hkv = p.heads_kv, d = p.head_dim, dv = p.head_dim_v;
  const double tol = dtype_bound(p.dtype);
  double worst = 0.0, worst_lse = 0.0;
  std::size_t empty_rows = 0;
  for (std::int64_t b = 0; b < p.batch; ++b) {
    const Problem one = p.sequence(b);
    ASSERT_EQ(one.validate(), "") << "sequence " << b;
    const std::int64_t qs = p.q_start(b), ks = p.kv_start(b);
    // The sequence's slice of every packed tensor: its rows are contiguous.
    RunOutput seq;
    seq.o.assign(got.o.begin() + qs * hq * dv, got.o.begin() + (qs + one.seq_q) * hq * dv);
    seq.lse.assign(got.lse.begin() + qs * hq, got.lse.begin() + (qs + one.seq_q) * hq);
    std::size_t empty = 0;
    expect_written_and_empty_rows_zero(one, seq, empty);
    if (HasFatalFailure()) return;
    empty_rows += empty;
    const std::vector<attn::RowIndex> rows = check_rows(one);
    std::vector<double> ref_o(rows.size() * static_cast<std::size_t>(dv)), ref_lse(rows.size());
    attn::cpu_reference_rows(one, in.q.values.data() + qs * hq * d, in.k.values.data() + ks * hkv * d,
                             in.v.values.data() + ks * hkv * dv, one.default_scale(), rows, ref_o.data(),
                             ref_lse.data());
    const Errors e = compare(one, rows, seq, ref_o, ref_lse);
    EXPECT_LE(e.rel_l2, tol) << "sequence " << b << " (" << one.full_label() << ")";
    EXPECT_LE(e.lse_max_abs, 8.0 * tol) << "sequence " << b << " (" << one.full_label() << ")";
    worst = std::max(worst, e.rel_l2);
    worst_lse = std::max(worst_lse, e.lse_max_abs);
  }
  std::cout << "[varlen] " << GetParam().name << " (" << p.batch << " sequences, " << p.total_q()
            << " queries, " << p.total_kv() << " keys): worst rel_l2 " << worst << ", worst LSE abs "
            << worst_lse << ", tol " << tol << ", empty rows " << empty_rows << "\n";
}

std::string case_name(const ::testing::TestParamInfo<VarlenCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Varlen, VarlenKernelTest, ::testing::ValuesIn(varlen_cases()), case_name);

// Varlen batches take the band kernel at one tile per head dim (refused elsewhere with the tile to
// use); the backward takes them at its head dims.
TEST(Fa2MmaSpec, VarlenRunsItsOneTileAndTheBackward) {
  const attn::KernelSpec spec = attn::make_fa2_mma_spec();
  EXPECT_TRUE(spec.varlen);
  for (int d : attn::fa2::kHeadDims) {
    const attn::fa2::TileConfig t = attn::fa2::varlen_tiles(d);
    EXPECT_FALSE(attn::fa2::is_tight(d, t)) << d;
    const Problem p = varlen(2, 1, {1, 300, 17}, {5, 300, 17}, d, DType::fp16, true);
    EXPECT_EQ(attn::kernel_why_not(spec, p, {}), "") << d;
    EXPECT_EQ(spec.why_not(p, {{"br", t.br}, {"bc", t.bc}, {"warps", t.warps}, {"stages", t.stages}}), "")
        << d;
  }
  const Problem p128 = varlen(2, 1, {1, 300}, {5, 300}, 128, DType::bf16, false);
  const std::string tight = spec.why_not(p128, {{"bc", 64}});
  EXPECT_NE(tight.find("varlen batches run only tiles 128x32x4w s2"), std::string::npos) << tight;
  Problem bwd = p128;
  bwd.pass = attn::Pass::bwd;
  EXPECT_EQ(attn::backward_why_not(spec, bwd, {}), "");
  bwd.head_dim = bwd.head_dim_v = 256;
  EXPECT_EQ(attn::backward_why_not(spec, bwd, {}), "");
  bwd.head_dim = bwd.head_dim_v = 224;
  EXPECT_EQ(attn::backward_why_not(spec, bwd, {}), "");
  bwd.head_dim = bwd.head_dim_v = 48;  // not a compiled head dim: the reason names it and the list
  const std::string why = attn::backward_why_not(spec, bwd, {});
  EXPECT_NE(why.find("head_dim = 48"), std::string::npos) << why;
  EXPECT_NE(why.find("224 and 256"), std::string::npos) << why;
}

// cudnn.sdpa's varlen forward: one band for the batch, so a mask with other key lengths than query
// lengths is refused with the reason; the backward refuses varlen.
TEST(CudnnSdpaSpec, VarlenRules) {
  const attn::KernelSpec spec = attn::make_cudnn_sdpa_spec();
  EXPECT_TRUE(spec.varlen);
  EXPECT_EQ(spec.why_not(varlen(4, 2, {1, 300}, {1, 300}, 128, DType::fp16, true), {}), "");
  EXPECT_EQ(spec.why_not(varlen(4, 2, {1, 300}, {5, 300}, 128, DType::fp16, false), {}), "");
  const std::string ragged = spec.why_not(varlen(4, 2, {1, 300}, {5, 300}, 128, DType::fp16, true), {});
  EXPECT_NE(ragged.find("each sequence's only when q = kv per sequence"), std::string::npos) << ragged;
  Problem bwd = varlen(4, 2, {1, 300}, {1, 300}, 128, DType::fp16, true);
  bwd.pass = attn::Pass::bwd;
  EXPECT_NE(attn::backward_why_not(spec, bwd, {}).find("cudnn.sdpa's backward takes dense batches only"),
            std::string::npos);
}

}  // namespace
