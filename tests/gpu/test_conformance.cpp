// The conformance suite on the GPU: every registered CUDA kernel (kernels/registry.def) over the
// matrix of tests/support/conformance.hpp in fp16 and bf16, through the CUDA engine, so a kernel
// registered by its one line is checked with no test edit. scripts/device/conformance.sh runs it
// on the device and prints the kernel x pass/skip/fail table.
#include <gtest/gtest.h>

#include <memory>

#include "tests/support/conformance.hpp"
#include "tests/support/gpu_probe.hpp"

namespace attn {
namespace {

class Conformance : public ::testing::TestWithParam<std::string> {};

// One engine a kernel, as a worker has: its problem cache serves the kernel's cases in order. (Not
// a static shared by the suite: its CUDA resources must go before the runtime unloads at exit.)
TEST_P(Conformance, EveryCaseIsCorrectOrRefused) {
  ATTN_SKIP_WITHOUT_GPU();
  const std::unique_ptr<CaseEngine> engine = make_engine(Backend::cuda, test::conformance_protocol());
  test::run_conformance(*engine, GetParam(), {DType::fp16, DType::bf16});
}

// Each non-default value of each declared knob, one at a time, on a few shapes of the matrix.
TEST_P(Conformance, EveryKnobValueIsCorrectOrRefused) {
  ATTN_SKIP_WITHOUT_GPU();
  const std::unique_ptr<CaseEngine> engine = make_engine(Backend::cuda, test::conformance_protocol());
  test::run_knob_conformance(*engine, GetParam(), {DType::fp16, DType::bf16});
}

INSTANTIATE_TEST_SUITE_P(Registry, Conformance, ::testing::ValuesIn(test::registered_kernels(Backend::cuda)),
                         test::kernel_test_name);

// Every CUDA kernel that declares a backward, over the backward matrix: dQ, dK and dV checked.
class BackwardConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(BackwardConformance, EveryGradientIsCorrectOrRefused) {
  ATTN_SKIP_WITHOUT_GPU();
  const std::unique_ptr<CaseEngine> engine = make_engine(Backend::cuda, test::conformance_protocol());
  const test::ConformanceCounts n =
      test::run_conformance(*engine, GetParam(), {}, test::backward_matrix({DType::fp16, DType::bf16}, true));
  if (n.pass == 0 && n.fail == 0)
    GTEST_SKIP() << GetParam() << " refused every case, e.g. " << n.first_refusal;
}

INSTANTIATE_TEST_SUITE_P(Registry, BackwardConformance,
                         ::testing::ValuesIn(test::registered_backward_kernels(Backend::cuda)),
                         test::kernel_test_name);

// The suite iterates the registry itself: every CUDA entry is a parameter above.
TEST(ConformanceRegistry, CoversEveryCudaKernel) {
  std::size_t cuda = 0;
  for (const KernelSpec& k : kernel_registry()) cuda += k.backend == Backend::cuda ? 1 : 0;
  EXPECT_EQ(test::registered_kernels(Backend::cuda).size(), cuda);
  EXPECT_GT(cuda, 0u);
}

}  // namespace
}  // namespace attn
