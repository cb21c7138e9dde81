// kernels/registry.def is the one list of kernels: the registry holds exactly its lines (the CUDA
// ones only in a CUDA build), in its order, with unique family.variant ids.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/registry.hpp"

namespace attn {
namespace {

TEST(Registry, HoldsExactlyTheLinesOfRegistryDef) {
  std::size_t cpu_lines = 0, cuda_lines = 0;
#define ATTN_CPU_KERNEL(factory) ++cpu_lines;
#define ATTN_CUDA_KERNEL(factory) ++cuda_lines;
#include "kernels/registry.def"
  std::size_t cpu = 0, cuda = 0;
  for (const KernelSpec& k : kernel_registry()) (k.backend == Backend::cpu ? cpu : cuda) += 1;
  EXPECT_EQ(cpu, cpu_lines);
  EXPECT_EQ(cuda, built_with_cuda() ? cuda_lines : 0u);
}

TEST(Registry, IdsAreUniqueFamilyDotVariant) {
  std::set<std::string> seen;
  for (const KernelSpec& k : kernel_registry()) {
    EXPECT_TRUE(seen.insert(k.id).second) << "duplicate id " << k.id;
    EXPECT_NE(k.id.find('.'), std::string::npos) << k.id;
    EXPECT_TRUE(k.why_not && k.prepare) << k.id;
    EXPECT_FALSE(k.description.empty()) << k.id;
  }
}

}  // namespace
}  // namespace attn
