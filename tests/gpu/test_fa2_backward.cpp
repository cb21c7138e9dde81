// fa2.mma's backward tiles: which Q/dO buffering each GPU's shared memory takes (host checks, run
// everywhere), and the lean single-buffered tiles over the whole backward matrix on the GPU here
// (knob bwd_buffers = 1), the code an sm_80 GPU runs at D 64, 128, 192, 224 and 256.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/common/smem_optin.hpp"
#include "kernels/fa2/fa2_backward.hpp"
#include "tests/support/conformance.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/kernel_harness.hpp"

namespace attn {
KernelSpec make_fa2_mma_spec();
}  // namespace attn

namespace {

using attn::DType;
using attn::Problem;
using attn::fa2::backward_tiles;
namespace smem = attn::smem;

Problem backward_problem(int d) {
  Problem p = attn::test::make_problem(2, 4, 2, 300, 300, d, DType::fp16, true);
  p.pass = attn::Pass::bwd;
  return p;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// sm_90: double-buffered at every D. sm_80 (163 KiB): double where it fits (D 32, 96, 160), the lean
// tiles elsewhere, each within the GPU's bytes; the lean tiles are smaller than the double ones.
TEST(Fa2BackwardSpec, EachGpuGetsTilesThatFit) {
  for (int d : {32, 64, 96, 128, 160, 192, 224, 256}) {
    const Problem p = backward_problem(d);
    const attn::fa2::BackwardTiles h100 = backward_tiles(p, 0, smem::kSm90Optin);
    EXPECT_EQ(h100.buffers, 2) << d << ": " << h100.why_not;
    EXPECT_LE(h100.smem_bytes, smem::kSm90Optin) << d;
    const attn::fa2::BackwardTiles a100 = backward_tiles(p, 0, smem::kSm80Optin);
    const bool lean = d == 64 || d == 128 || d == 192 || d == 224 || d == 256;
    EXPECT_EQ(a100.buffers, lean ? 1 : 2) << d << ": " << a100.why_not;
    EXPECT_LE(a100.smem_bytes, smem::kSm80Optin) << d;
    if (lean) {
      EXPECT_GT(h100.smem_bytes, smem::kSm80Optin) << d;
      EXPECT_EQ(backward_tiles(p, 1, smem::kSm90Optin).buffers, 1) << d;  // the knob on an H100
      EXPECT_LT(backward_tiles(p, 1, smem::kSm90Optin).smem_bytes, h100.smem_bytes) << d;
    }
  }
}

// What does not fit, and a knob that asks for what is not compiled, say why with the numbers.
TEST(Fa2BackwardSpec, RefusalsNameTheBytesAndTheKnob) {
  const attn::fa2::BackwardTiles forced = backward_tiles(backward_problem(128), 2, smem::kSm80Optin);
  EXPECT_EQ(forced.buffers, 0);
  EXPECT_TRUE(contains(forced.why_not, "head_dim 128 needs")) << forced.why_not;
  EXPECT_TRUE(contains(forced.why_not, "(knob bwd_buffers = 2)")) << forced.why_not;
  EXPECT_TRUE(contains(forced.why_not, "allows " + std::to_string(smem::kSm80Optin))) << forced.why_not;
  const attn::fa2::BackwardTiles ada = backward_tiles(backward_problem(64), 0, smem::kSm86Optin);
  EXPECT_EQ(ada.buffers, 0);
  EXPECT_TRUE(contains(ada.why_not, "head_dim 64 needs")) << ada.why_not;
  const attn::fa2::BackwardTiles no_lean = backward_tiles(backward_problem(96), 1, smem::kSm90Optin);
  EXPECT_EQ(no_lean.buffers, 0);
  EXPECT_TRUE(contains(no_lean.why_not, "knob bwd_buffers = 1")) << no_lean.why_not;
  EXPECT_TRUE(contains(no_lean.why_not, "head_dim 96 has no lean tiles")) << no_lean.why_not;

  // Through the spec: the knob on a D without lean tiles, and on a pass without a backward.
  const attn::KernelSpec spec = attn::make_fa2_mma_spec();
  EXPECT_TRUE(contains(attn::backward_why_not(spec, backward_problem(96), {{"bwd_buffers", 1}}),
                       "has no lean tiles"));
  EXPECT_EQ(attn::backward_why_not(spec, backward_problem(128), {{"bwd_buffers", 1}}), "");
  Problem fwd = backward_problem(128);
  fwd.pass = attn::Pass::fwd;
  const std::string why = spec.why_not(fwd, {{"bwd_buffers", 1}});
  EXPECT_TRUE(contains(why, "knob bwd_buffers = 1")) << why;
  EXPECT_TRUE(contains(why, "pass = fwd runs no backward")) << why;
  EXPECT_EQ(spec.why_not(fwd, {}), "");
}

// The lean tiles over the backward matrix (every shape and dtype of the default tiles' matrix): dQ,
// dK and dV checked, the head dims without lean tiles refused (skipped).
TEST(Fa2BackwardTiles, LeanTilesPassTheBackwardMatrix) {
  ATTN_SKIP_WITHOUT_GPU();
  const std::unique_ptr<attn::CaseEngine> engine =
      attn::make_engine(attn::Backend::cuda, attn::test::conformance_protocol());
  const attn::test::ConformanceCounts n =
      attn::test::run_conformance(*engine, "fa2.mma", {{"bwd_buffers", 1}},
                                  attn::test::backward_matrix({DType::fp16, DType::bf16}, true));
  EXPECT_GT(n.pass, 20) << n.first_refusal;
  EXPECT_EQ(n.fail, 0);
}

}  // namespace
