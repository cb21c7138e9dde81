// The kernel contract: a registry entry says what it is, which problems it takes (and why not),
// its knobs, and how to prepare a runnable instance. Adding a kernel = one source file + one
// registry line (kernels/registry.cpp).
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/api/dtype.hpp"
#include "kernels/api/problem.hpp"

namespace attn {

using Knobs = std::map<std::string, int>;

// A knob's value in `k`, 0 (the kernel's default) when it is not set.
inline int knob_value(const Knobs& k, const std::string& name) {
  const auto it = k.find(name);
  return it == k.end() ? 0 : it->second;
}

struct KnobSpec {
  std::string name;
  std::vector<int> values;  // the compiled choices
  int default_value = 0;    // 0 = "let the kernel's traits choose" where the kernel says so
  std::string help;
};

// Pointers are device pointers for Backend::cuda kernels and host pointers for Backend::cpu ones.
// Element type is problem.dtype; lse may be null (then the kernel must not write it).
struct AttentionArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;
  float scale = 1.0f;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  void* stream = nullptr;  // cudaStream_t for CUDA kernels
};

// A kernel bound to one problem and knob set: handles, plans and descriptors live here, so
// expensive set-up (cuDNN graph building, cuBLAS handles) stays outside the timed region.
class PreparedKernel {
 public:
  virtual ~PreparedKernel() = default;
  virtual std::size_t workspace_bytes() const { return 0; }
  virtual bool writes_lse() const { return false; }
  // Enqueues the attention on args.stream (CUDA) or runs it to completion (CPU). Throws
  // KernelError on failure; must not synchronise the stream.
  virtual void run(const AttentionArgs& args) = 0;
};

// A kernel that refuses a problem at prepare time (e.g. cuDNN finds no engine): the case is
// `skipped` with this message as its reason.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failure while preparing or launching (a bad CUDA status, a library error).
class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The error bound a kernel that trades precision on purpose (fp16 accumulation) states for a
// problem: the check holds it to this instead of the dtype bound, and the record names `why`.
struct StatedBound {
  double rel_l2 = 0;   // bound on ||O - ref|| / ||ref||
  double lse_abs = 0;  // bound on |LSE - ref| [natural-log units]
  std::string why;
};

struct KernelSpec {
  std::string id;           // family.variant, e.g. "cublas.unfused"
  std::string description;  // one line
  Backend backend = Backend::cuda;
  std::vector<KnobSpec> knobs;
  // Empty string when the kernel takes the problem; otherwise the reason, naming the field.
  std::function<std::string(const Problem&, const Knobs&)> why_not;
  std::function<std::unique_ptr<PreparedKernel>(const Problem&, const Knobs&)> prepare;
  // Empty: the engine's tolerance rule (2x cudnn.sdpa, else the dtype bound).
  std::function<StatedBound(const Problem&)> stated_bound;
};

}  // namespace attn
