// What `devices` and `run` say when the CUDA runtime finds no usable device (issue 24 item 8).
#include <gtest/gtest.h>

#include "profiling/engine/devices.hpp"

namespace attn {
namespace {

// With no driver installed the runtime says "CUDA driver version is insufficient"; the message
// must say that there is no driver instead of sending the user to upgrade one.
TEST(Devices, NoDriverAtAllIsSaidAsSuch) {
  const std::string none = cuda_unavailable_reason(
      "cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version",
      "libcuda.so.1 cannot be loaded: libcuda.so.1: cannot open shared object file");
  EXPECT_EQ(none.rfind("no NVIDIA driver found (libcuda.so.1 cannot be loaded", 0), 0u) << none;
  EXPECT_EQ(none.find("insufficient"), std::string::npos) << none;
  // A driver that loads but is too old keeps the runtime's own words.
  EXPECT_EQ(cuda_unavailable_reason("cudaErrorInsufficientDriver", "CUDA driver version is insufficient", ""),
            "no usable CUDA device (cudaErrorInsufficientDriver: CUDA driver version is insufficient)");
}

}  // namespace
}  // namespace attn
