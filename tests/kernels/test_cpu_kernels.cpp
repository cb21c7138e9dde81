// cpu.flash against cpu.reference on every mask kind with odd sizes; half conversion exactness.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/api/half_convert.hpp"
#include "kernels/cpu/cpu_reference.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/check.hpp"
#include "profiling/engine/inputs.hpp"

namespace attn {
namespace {

struct Shape {
  std::int64_t b, hq, hkv, sq, sk, d, dv;
  bool causal;
  Window window;
};

class CpuFlashVsReference : public ::testing::TestWithParam<Shape> {};

TEST_P(CpuFlashVsReference, MatchesOracle) {
  const Shape s = GetParam();
  Problem p;
  p.batch = s.b;
  p.heads_q = s.hq;
  p.heads_kv = s.hkv;
  p.seq_q = s.sq;
  p.seq_kv = s.sk;
  p.head_dim = s.d;
  p.head_dim_v = s.dv;
  p.causal = s.causal;
  p.window = s.window;
  p.dtype = DType::fp32;
  ASSERT_EQ(p.validate(), "");
  const HostInputs in = generate_inputs(p, 7);

  std::vector<double> ref(static_cast<std::size_t>(p.o_elems())),
      ref_lse(static_cast<std::size_t>(p.lse_elems()));
  cpu_reference_attention(p, in.q.data(), in.k.data(), in.v.data(), p.default_scale(), ref.data(),
                          ref_lse.data());

  const KernelSpec* flash = find_kernel("cpu.flash");
  ASSERT_NE(flash, nullptr);
  for (int block : {16, 64}) {
    const Knobs knobs{{"block_q", block}, {"block_k", block == 16 ? 64 : 16}};
    ASSERT_EQ(flash->why_not(p, knobs), "");
    auto k = flash->prepare(p, knobs);
    std::vector<float> o(static_cast<std::size_t>(p.o_elems()), std::numeric_limits<float>::quiet_NaN());
    std::vector<float> lse(static_cast<std::size_t>(p.lse_elems()), std::numeric_limits<float>::quiet_NaN());
    AttentionArgs a;
    a.q = in.q.data();
    a.k = in.k.data();
    a.v = in.v.data();
    a.o = o.data();
    a.lse = lse.data();
    a.scale = static_cast<float>(p.default_scale());
    k->run(a);
    const ErrorStats e = compare_outputs(o, ref);
    EXPECT_EQ(e.nonfinite, 0);
    EXPECT_LT(e.rel_l2, 2e-6) << "block " << block;
    const ErrorStats le = compare_lse(lse, ref_lse);
    EXPECT_EQ(le.nonfinite, 0);
    EXPECT_LT(le.max_abs, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Masks, CpuFlashVsReference,
    ::testing::Values(Shape{1, 2, 2, 37, 37, 32, 32, false, {}},  // full, odd S
                      Shape{2, 3, 3, 65, 65, 16, 16, true, {}},   // causal square
                      Shape{1, 4, 2, 33, 97, 24, 24, true, {}},   // causal, Sk > Sq, GQA
                      Shape{1, 4, 1, 97, 33, 24, 40, true, {}},   // causal, Sq > Sk: empty rows, MQA, Dv != D
                      Shape{1, 2, 2, 70, 70, 32, 32, false, {8, 0}},       // sliding window (8, 0)
                      Shape{1, 2, 2, 70, 50, 32, 32, false, {5, 9}},       // two-sided window, Sq != Sk
                      Shape{3, 1, 1, 1, 19, 8, 8, true, {}},               // a single query row
                      Shape{1, 2, 2, 45, 45, 16, 16, true, Window{4, -1}}  // causal + left window
                      ));

TEST(CpuReference, RowsWithNoVisibleKeyAreZeroWithMinusInfLse) {
  Problem p;
  p.seq_q = 4;
  p.seq_kv = 2;
  p.causal = true;  // rows 0 and 1 see nothing
  p.head_dim = p.head_dim_v = 4;
  p.dtype = DType::fp32;
  const HostInputs in = generate_inputs(p, 1);
  std::vector<double> o(static_cast<std::size_t>(p.o_elems()), 7.0), lse(4);
  cpu_reference_attention(p, in.q.data(), in.k.data(), in.v.data(), 0.5, o.data(), lse.data());
  for (int d = 0; d < 8; ++d) EXPECT_EQ(o[static_cast<std::size_t>(d)], 0.0);
  EXPECT_TRUE(std::isinf(lse[0]) && lse[0] < 0);
  EXPECT_TRUE(std::isfinite(lse[2]));
  // Row 2 sees key 0 only: its output is exactly V[0].
  for (int d = 0; d < 4; ++d)
    EXPECT_DOUBLE_EQ(o[static_cast<std::size_t>(2 * 4 + d)], in.v[static_cast<std::size_t>(d)]);
}

TEST(CpuKernels, RefuseNonFp32WithReason) {
  Problem p;
  p.dtype = DType::fp16;
  const std::string why = find_kernel("cpu.flash")->why_not(p, {});
  EXPECT_NE(why.find("dtype = fp16"), std::string::npos);
  EXPECT_NE(why.find("--dtype fp32"), std::string::npos);
}

TEST(HalfConvert, RoundTripsAndRoundsToNearestEven) {
  EXPECT_EQ(float_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(fp16_to_float(0x3C00), 1.0f);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16(1e6f), 0x7C00);                // overflow to inf
  EXPECT_EQ(float_to_fp16(1.0f + 1.0f / 2048), 0x3C00);  // tie -> even
  EXPECT_EQ(float_to_fp16(1.0f + 3.0f / 2048), 0x3C02);  // tie -> even (up)
  EXPECT_EQ(fp16_to_float(float_to_fp16(5.960464477539063e-08f)), 5.960464477539063e-08f);  // min subnormal
  EXPECT_EQ(float_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(bf16_to_float(float_to_bf16(3.140625f)), 3.140625f);
  EXPECT_EQ(float_to_bf16(1.0f + 1.0f / 256), 0x3F80);  // tie -> even
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(std::numeric_limits<float>::quiet_NaN()))));
  for (std::uint32_t h = 0; h < 0x7C00; h += 7)
    EXPECT_EQ(float_to_fp16(fp16_to_float(static_cast<std::uint16_t>(h))), h);
}

}  // namespace
}  // namespace attn
