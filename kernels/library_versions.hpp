// Versions of the CUDA libraries attnscope links or loads, for run records and `attnscope devices`.
#pragma once
#include <string>

namespace attn {

struct LibraryVersions {
  std::string cuda_runtime;  // the cudart attnscope was built with, "13.0"
  std::string cuda_driver;   // the CUDA version the driver supports, "13.0"; empty without a driver
  std::string cublas;        // "13.0.2"
  std::string cudnn;         // "9.14.0" (the loaded library), empty when not loadable
  std::string cupti;         // CUPTI API version, empty when libcupti is not found
};

// Never throws; fields that cannot be read stay empty.
LibraryVersions library_versions();

}  // namespace attn
