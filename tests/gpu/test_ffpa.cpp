// GPU tests for ffpa.l1 (kernels/ffpa/): D 256/288/320/480/1024 x S 1/100/4097, causal, GQA,
// Sq != Sk both ways (Sk up to 20000), a window, stages 1 and 2; every compiled tile timed; output poisoned
// with NaN first. acc_f32 is held to 2x cublas.unfused's error on the same inputs (floored at a quarter of
// the dtype bound); acc_f16 to its stated bound (kernels/ffpa/ffpa_accuracy.hpp). Host checks of the specs.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/ffpa/ffpa_accuracy.hpp"
#include "kernels/ffpa/ffpa_traits.hpp"
#include "kernels/registry.hpp"
#include "tests/support/ffpa_checks.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/kernel_harness.hpp"

namespace attn {
KernelSpec make_ffpa_l1_acc_f32_spec();
KernelSpec make_ffpa_l1_acc_f16_spec();
KernelSpec make_cublas_unfused_spec();
}  // namespace attn

namespace {

using attn::DType;
using attn::Problem;

using namespace attn::test;  // NOLINT(google-build-using-namespace): the shared harness

struct FfpaCase {
  std::string name;
  bool acc_f16 = false;
  int stages = 2;
  Problem problem;
  int q_resident = 0;
};

std::vector<FfpaCase> all_cases() {
  std::vector<FfpaCase> out;
  for (int d : {256, 288, 320, 480, 1024})
    for (const FfpaVariant& v : kFfpaVariants) {
      const std::string tag = ffpa_case_prefix(d, v);
      const DType t = v.dtype;
      auto add = [&](const std::string& n, const Problem& p, int stages = 2, int q_resident = 0) {
        out.push_back({tag + n, v.acc_f16, stages, p, q_resident});
      };
      add("s1", make_problem(1, 3, 3, 1, 1, d, t));
      add("s100_causal_gqa", make_problem(2, 8, 2, 100, 100, d, t, true));
      add("s100_stages1", make_problem(1, 3, 1, 100, 100, d, t, true), 1);
      add("sq100_sk4097_causal", make_problem(1, 2, 2, 100, 4097, d, t, true));
      add("sq4097_sk100_causal", make_problem(1, 1, 1, 4097, 100, d, t, true));  // 3997 rows see no key
      add("s4097_full", make_problem(1, 3, 3, 4097, 4097, d, t));
      add("s4097_causal_gqa", make_problem(1, 4, 2, 4097, 4097, d, t, true));
      add("s4097_causal_stages1", make_problem(1, 1, 1, 4097, 4097, d, t, true), 1);
      add("sq1000_sk3000_gqa_stages1", make_problem(1, 4, 1, 1000, 3000, d, t, true), 1);
      // Q resident at the traits' stage count (0): acc_f16 above D = 768 cannot take stages 2.
      add("s4097_causal_gqa_qres", make_problem(1, 4, 2, 4097, 4097, d, t, true), 0, 1);
      add("sq100_sk4097_qres_stages1", make_problem(2, 2, 1, 100, 4097, d, t, true), 1, 1);
      add("s1000_win128_64_qres", make_problem(1, 3, 3, 1000, 1000, d, t, false, {128, 64}), 0, 1);
      add("s1000_win128_64", make_problem(1, 3, 3, 1000, 1000, d, t, false, {128, 64}));
      // A long key range: 157 or 313 key tiles of rescales (acc_f32) or folds into fp16 O (acc_f16).
      add("sq64_sk20000_causal_gqa", make_problem(1, 2, 1, 64, 20000, d, t, true));
    }
  return out;
}

void PrintTo(const FfpaCase& c, std::ostream* os) { *os << c.name; }

class FfpaTest : public ::testing::TestWithParam<FfpaCase> {};

TEST_P(FfpaTest, MatchesOracleWithinItsBound) {
  ATTN_SKIP_WITHOUT_GPU();
  const FfpaCase& c = GetParam();
  const Problem& p = c.problem;
  ASSERT_EQ(p.validate(), "");
  const std::uint32_t seed = static_cast<std::uint32_t>(std::hash<std::string>{}(p.full_label()));
  const attn::KernelSpec spec =
      c.acc_f16 ? attn::make_ffpa_l1_acc_f16_spec() : attn::make_ffpa_l1_acc_f32_spec();
  OracleRun run;
  run_against_oracle(spec, p, {{"stages", c.stages}, {"q_resident", c.q_resident}}, seed, run);
  if (HasFatalFailure()) return;

  FfpaTolerance tol;
  ffpa_tolerance(p, c.acc_f16, run.in, run.ref, tol);
  if (HasFatalFailure()) return;
  std::cout << "[" << spec.id << "] " << c.name << " (" << p.full_label() << ", stages " << c.stages
            << ", q_resident " << c.q_resident << "): rel_l2 " << run.err.rel_l2 << ", cublas.unfused "
            << tol.math_err << ", tol " << tol.rel_l2 << " (" << tol.rule << "), LSE max abs "
            << run.err.lse_max_abs << " (tol " << tol.lse_abs << "), empty rows " << run.empty_rows
            << ", rows checked " << run.ref.rows.size() << "\n";
  EXPECT_LE(run.err.rel_l2, tol.rel_l2) << p.full_label();
  EXPECT_LE(run.err.lse_max_abs, tol.lse_abs) << p.full_label();
}

std::string case_name(const ::testing::TestParamInfo<FfpaCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Ffpa, FfpaTest, ::testing::ValuesIn(all_cases()), case_name);

// Every compiled kernel (default tiles x stages x Q residency): correct on a ragged causal GQA
// shape with a D tail chunk, then timed at the ffpa-large-d shape (B=1, H=48, S=8192) with constant
// inputs (the kernel has no data-dependent path), median of 10.
struct TileCase {
  bool acc_f16;
  attn::ffpa::FfpaTiles tiles;
  int stages;
  int q_resident;
  int d;
};

// -1 when the inputs do not fit; the engine's stages otherwise (tests/support/kernel_harness.hpp).
double time_kernel(attn::PreparedKernel& kernel, const Problem& p, int launches) {
  attn::test::TestStream stream;
  try {
    const attn::DeviceBuffer q(static_cast<std::size_t>(p.q_elems()) * 2),
        k(static_cast<std::size_t>(p.k_elems()) * 2), v(static_cast<std::size_t>(p.v_elems()) * 2);
    // 0x3C3C: fp16 1.06 everywhere (bf16 0.011): finite scores, a flat softmax.
    for (const attn::DeviceBuffer* t : {&q, &k, &v})
      if (cudaMemsetAsync(t->get(), 0x3C, t->bytes(), stream.get()) != cudaSuccess) return -1.0;
    const attn::CaseBuffers b = attn::allocate_case_buffers(p, kernel);
    const attn::AttentionArgs a = attn::make_args(p, q.get(), k.get(), v.get(), b, stream.get());
    attn::run_once(kernel, a, b);
    return attn::test::median_launch_ms(kernel, a, launches);
  } catch (const attn::CudaError& e) {
    if (e.out_of_memory()) return -1.0;
    throw;
  }
}

void PrintTo(const TileCase& c, std::ostream* os) {
  *os << (c.acc_f16 ? "acc_f16 " : "acc_f32 ") << attn::ffpa::to_string(c.tiles) << " stages " << c.stages
      << " q_resident " << c.q_resident << " D " << c.d;
}

class FfpaTileTest : public ::testing::TestWithParam<TileCase> {};

TEST_P(FfpaTileTest, EveryCompiledTileIsCorrectAndTimed) {
  ATTN_SKIP_WITHOUT_GPU();
  const TileCase& c = GetParam();
  const attn::Knobs knobs{{"stages", c.stages}, {"q_resident", c.q_resident}};
  const attn::KernelSpec spec =
      c.acc_f16 ? attn::make_ffpa_l1_acc_f16_spec() : attn::make_ffpa_l1_acc_f32_spec();
  std::ostringstream label;
  label << attn::ffpa::to_string(c.tiles) << " s" << c.stages << (c.q_resident ? " q_resident" : "");
  const std::string name = label.str();
  {
    const Problem p = make_problem(1, 6, 2, 333, 1001, c.d - 32, DType::fp16, true);  // a D tail chunk
    const Inputs in = make_inputs(p, 5u + static_cast<std::uint32_t>(c.d));
    RunOutput got;
    run_kernel(spec, p, knobs, in, 0, got);
    if (HasFatalFailure()) return;
    const Oracle ref = oracle_rows(p, in);
    const Errors e = compare(p, ref, got);
    const double tol = c.acc_f16 ? attn::ffpa::acc_f16_error_bound(p).rel_l2 : dtype_bound(p.dtype);
    EXPECT_LE(e.rel_l2, tol) << name << " " << p.full_label();
  }
  const Problem p = make_problem(1, 48, 48, 8192, 8192, c.d, DType::fp16);
  ASSERT_EQ(spec.why_not(p, knobs), "") << name;
  const auto prepared = spec.prepare(p, knobs);
  const double ms = time_kernel(*prepared, p, 10);
  ASSERT_GT(ms, 0.0) << name;
  std::cout << "[ffpa.tiles] " << spec.id << " D=" << c.d << " " << name << ": " << ms << " ms, "
            << p.flops() / (ms * 1e-3) / 1e12 << " TFLOPS\n";
}

constexpr int kSmemOptinH100 = 227 * 1024;  // [bytes] a block, sm_90

// Where Q resident with stages 2 needs more shared memory than the GPU allows a block, prepare()
// refuses and says what to change; the default stage count runs.
TEST(FfpaGpu, RefusesQResidentConfigurationsThatDoNotFit) {
  ATTN_SKIP_WITHOUT_GPU();
  const attn::KernelSpec spec = attn::make_ffpa_l1_acc_f16_spec();
  const Problem p = make_problem(1, 2, 2, 256, 256, 1024, DType::fp16);
  const attn::Knobs too_big{{"stages", 2}, {"q_resident", 1}};
  ASSERT_EQ(spec.why_not(p, too_big), "");  // the device limit is checked where the device is known
  try {
    spec.prepare(p, too_big);
    ADD_FAILURE() << "stages 2 with Q resident at D = 1024 should not fit 227 KiB";
  } catch (const attn::Unsupported& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("head_dim 1024"), std::string::npos) << what;
    EXPECT_NE(what.find("use stages=1"), std::string::npos) << what;
  }
  EXPECT_NE(spec.prepare(p, {{"q_resident", 1}}), nullptr);
  EXPECT_NE(spec.prepare(make_problem(1, 2, 2, 256, 256, 768, DType::fp16), too_big), nullptr);
}

std::vector<TileCase> tile_cases() {
  std::vector<TileCase> out;
  for (bool acc_f16 : {false, true})
    for (int dmax : attn::ffpa::kCapacities) {
      const auto tiles = attn::ffpa::compiled_tiles(acc_f16, dmax)[0];
      for (int d : {dmax == 512 ? 320 : 640, dmax})
        for (int q_resident : {0, 1})
          for (int stages : {2, 1})
            if (attn::ffpa::smem_bytes(tiles, stages, q_resident == 1, d) <= kSmemOptinH100)
              out.push_back({acc_f16, tiles, stages, q_resident, d});
    }
  return out;
}

std::string tile_name(const ::testing::TestParamInfo<TileCase>& info) {
  const auto& c = info.param;
  std::ostringstream name;
  name << (c.acc_f16 ? "f16" : "f32") << "_d" << c.d << '_' << c.tiles.br << 'x' << c.tiles.bc << 'x'
       << c.tiles.warps << "w_c" << c.tiles.chunk << "_s" << c.stages << (c.q_resident ? "_qres" : "");
  return name.str();
}

INSTANTIATE_TEST_SUITE_P(Ffpa, FfpaTileTest, ::testing::ValuesIn(tile_cases()), tile_name);

// Host-only: refusals name the field and what is allowed; both ids are registered.
TEST(FfpaSpec, RefusesWhatItDoesNotTake) {
  const attn::KernelSpec f32 = attn::make_ffpa_l1_acc_f32_spec();
  const attn::KernelSpec f16 = attn::make_ffpa_l1_acc_f16_spec();
  ASSERT_NE(attn::find_kernel("ffpa.l1.acc_f32"), nullptr);
  ASSERT_NE(attn::find_kernel("ffpa.l1.acc_f16"), nullptr);
  EXPECT_EQ(f32.why_not(make_problem(1, 8, 2, 100, 300, 1024, DType::bf16, true), {}), "");
  EXPECT_EQ(f16.why_not(make_problem(1, 8, 2, 100, 300, 288, DType::fp16, true), {{"stages", 1}}), "");
  EXPECT_NE(f16.why_not(make_problem(1, 1, 1, 16, 16, 512, DType::bf16), {}).find("use ffpa.l1.acc_f32"),
            std::string::npos);
  EXPECT_NE(f32.why_not(make_problem(1, 1, 1, 16, 16, 1056, DType::fp16), {}).find("head_dim = 1056"),
            std::string::npos);
  EXPECT_NE(f32.why_not(make_problem(1, 1, 1, 16, 16, 272, DType::fp16), {}).find("multiples of 32"),
            std::string::npos);
  EXPECT_NE(f32.why_not(make_problem(1, 1, 1, 16, 16, 512, DType::fp16), {{"stages", 3}}).find("stages = 3"),
            std::string::npos);
  EXPECT_NE(f32.why_not(make_problem(1, 1, 1, 16, 16, 512, DType::fp16), {{"q_resident", 2}})
                .find("q_resident = 2"),
            std::string::npos);
  EXPECT_EQ(f32.why_not(make_problem(1, 1, 1, 16, 16, 512, DType::bf16), {{"q_resident", 1}, {"stages", 1}}),
            "");
  Problem dv = make_problem(1, 1, 1, 16, 16, 512, DType::fp16);
  dv.head_dim_v = 256;
  EXPECT_NE(f32.why_not(dv, {}).find("head_dim_v = 256"), std::string::npos);
}

TEST(FfpaSpec, TilesFitAndSmemIsConstantInD) {
  for (bool acc_f16 : {false, true})
    for (int stages : {1, 2}) {
      int smem_small = 0;
      for (int d = 256; d <= 1024; d += 32) {
        const auto c = attn::ffpa::choose_tiles(d, acc_f16);
        EXPECT_GE(c.tiles.dmax, d);
        EXPECT_GT(std::string(c.reason).size(), 10u);
        const int streamed = attn::ffpa::smem_bytes(c.tiles, stages, false, d);
        const int resident = attn::ffpa::smem_bytes(c.tiles, stages, true, d);
        EXPECT_LE(streamed, 227 * 1024) << attn::ffpa::to_string(c.tiles) << " D=" << d;
        // Q resident fits at the default stage count; acc_f16 > 512 at stages 2 does not past D = 768.
        if (stages == c.stages_q_resident) {
          EXPECT_LE(resident, 227 * 1024) << attn::ffpa::to_string(c.tiles) << " D=" << d;
        }
        if (acc_f16 && stages == 2 && d > 512) {
          EXPECT_EQ(resident > 227 * 1024, d > 768) << d;
        }
        // Q resident holds Br x D: more than the streamed Q chunk buffers it replaces.
        EXPECT_GT(resident,
                  streamed - (stages + 1) * c.tiles.br * attn::ffpa::smem_stride(c.tiles.chunk) * 2);
        if (d == 256) smem_small = streamed;
        // Streamed, the footprint does not depend on D within a capacity class.
        if (d <= 512) {
          EXPECT_EQ(streamed, smem_small) << d;
        }
      }
    }
  // Defaults drop to one stage where two do not fit the GPU (A100: 163 KiB a block), never on the H100.
  constexpr int kA100 = 163 * 1024;
  for (bool acc_f16 : {false, true})
    for (bool q_resident : {false, true})
      for (int d = 32; d <= 1024; d += 32) {
        const auto c = attn::ffpa::choose_tiles(d, acc_f16);
        const int h100 = attn::ffpa::default_stages(d, acc_f16, q_resident, 227 * 1024);
        EXPECT_EQ(h100, q_resident ? c.stages_q_resident : c.stages) << d;
        const int a100 = attn::ffpa::default_stages(d, acc_f16, q_resident, kA100);
        if (attn::ffpa::smem_bytes(c.tiles, a100, q_resident, d) > kA100) {
          EXPECT_EQ(a100, 1) << d;  // lowered as far as it goes
        }
      }
  // The 128-key tiles' two stages (171 KiB) exceed the A100; acc_f16 up to 512 (112 KiB) keeps two.
  EXPECT_EQ(attn::ffpa::default_stages(512, false, false, kA100), 1);
  EXPECT_EQ(attn::ffpa::default_stages(1024, true, false, kA100), 1);
  EXPECT_EQ(attn::ffpa::default_stages(512, true, false, kA100), 2);
  // The stated acc_f16 bound grows with D and Sk and stays under 1.5% at the largest preset case.
  const auto small = attn::ffpa::acc_f16_error_bound(make_problem(1, 1, 1, 128, 128, 256, DType::fp16));
  const auto large = attn::ffpa::acc_f16_error_bound(make_problem(1, 48, 48, 8192, 8192, 1024, DType::fp16));
  EXPECT_LT(small.rel_l2, large.rel_l2);
  EXPECT_LT(large.rel_l2, 0.015);
  EXPECT_GT(small.rel_l2, 4.0 * std::ldexp(1.0, -11));
}

}  // namespace
