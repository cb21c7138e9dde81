// The shared launch-argument checks (kernels/api/launch_checks.hpp): each passes what the kernels
// take and refuses the rest naming the field, its value and the kernel, in the wording the families
// used before they shared it (records and presets quote these reasons).
#include <gtest/gtest.h>

#include "kernels/api/launch_checks.hpp"

namespace attn {
namespace {

Problem problem(DType t, std::int64_t d = 64, std::int64_t dv = 64) {
  Problem p;
  p.batch = 2;
  p.heads_q = p.heads_kv = 4;
  p.seq_q = p.seq_kv = 128;
  p.head_dim = d;
  p.head_dim_v = dv;
  p.dtype = t;
  return p;
}

TEST(LaunchChecks, Dtypes) {
  EXPECT_EQ(half_dtype_why_not(problem(DType::fp16), "fa2.mma"), "");
  EXPECT_EQ(half_dtype_why_not(problem(DType::bf16), "fa2.mma"), "");
  EXPECT_EQ(half_dtype_why_not(problem(DType::fp32), "fa2.mma"), "dtype = fp32: fa2.mma takes fp16 and bf16");
  EXPECT_EQ(acc_f16_dtype_why_not(problem(DType::fp16), "x.acc_f16", "wgmma", "x.acc_f32"), "");
  EXPECT_EQ(
      acc_f16_dtype_why_not(problem(DType::bf16), "x.acc_f16", "wgmma", "x.acc_f32"),
      "dtype = bf16: x.acc_f16 accumulates in fp16, which wgmma offers for fp16 inputs only; use x.acc_f32");
}

TEST(LaunchChecks, HeadDimsAndGrid) {
  EXPECT_EQ(same_head_dims_why_not(problem(DType::fp16), "k"), "");
  EXPECT_EQ(same_head_dims_why_not(problem(DType::fp16, 64, 32), "k"),
            "head_dim_v = 32: k needs head_dim_v == head_dim (64)");
  Problem p = problem(DType::fp16);
  EXPECT_EQ(grid_shape_why_not(p, "k"), "");
  p.heads_q = p.heads_kv = 65536;
  EXPECT_EQ(grid_shape_why_not(p, "k"),
            "batch = 2, heads_q = 65536: k puts them on grid.z and grid.y, at most 65535 each");
  p = problem(DType::fp16);
  p.seq_kv = (std::int64_t{1} << 30) + 1;
  EXPECT_NE(grid_shape_why_not(p, "k").find("seq_kv = 1073741825: k indexes rows in 32 bits"),
            std::string::npos);
}

TEST(LaunchChecks, KnobsAndChaining) {
  const Knobs none, two{{"stages", 2}}, three{{"stages", 3}};
  EXPECT_EQ(knob_choice_why_not(none, "stages", {0, 1, 2}, "k", "is compiled for 1 and 2"), "");
  EXPECT_EQ(knob_choice_why_not(two, "stages", {0, 1, 2}, "k", "is compiled for 1 and 2"), "");
  EXPECT_EQ(knob_choice_why_not(three, "stages", {0, 1, 2}, "k", "is compiled for 1 and 2"),
            "knob stages = 3: k is compiled for 1 and 2");
  EXPECT_EQ(first_reason({"", "second", "third"}), "second");
  EXPECT_EQ(first_reason({"", ""}), "");
  EXPECT_THROW(require_supported("no"), Unsupported);
  EXPECT_NO_THROW(require_supported(""));
}

// run()'s checks of the arguments, as the kernels word them.
TEST(LaunchChecks, RunArguments) {
  alignas(16) static float buf[64];
  AttentionArgs a;
  a.q = a.k = a.v = buf;
  a.o = buf;
  a.scale = 0.125f;
  EXPECT_NO_THROW(check_scale(a, "k"));
  EXPECT_NO_THROW(check_io_aligned(a, "k", "cp.async"));
  EXPECT_NO_THROW(check_io_present(a, "k"));
  EXPECT_NO_THROW(check_workspace(a, 0, "k"));
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const KernelError& e) {
      return std::string(e.what());
    }
    return std::string("no throw");
  };
  a.scale = 0.0f;
  EXPECT_EQ(message([&] { check_scale(a, "fa2.mma", "why"); }),
            "fa2.mma: scale = 0.000000: must be finite and > 0 (why)");
  a.k = buf + 1;  // 4-byte aligned only
  EXPECT_EQ(message([&] { check_io_aligned(a, "ffpa.l1", "cp.async"); }),
            "ffpa.l1: Q, K, V and O must be non-null and 16-byte aligned (cp.async)");
  a.v = nullptr;
  EXPECT_EQ(message([&] { check_io_present(a, "cudnn.sdpa"); }),
            "cudnn.sdpa: q, k, v and o must be device pointers");
  a.workspace = buf;
  a.workspace_bytes = 100;
  EXPECT_NO_THROW(check_workspace(a, 100, "k"));
  EXPECT_EQ(message([&] { check_workspace(a, 101, "naive.unfused"); }),
            "naive.unfused: workspace of 100 bytes, needs 101");
  a.workspace = nullptr;
  EXPECT_EQ(message([&] { check_workspace(a, 1, "k"); }), "k: workspace of 100 bytes, needs 1");
}

}  // namespace
}  // namespace attn
