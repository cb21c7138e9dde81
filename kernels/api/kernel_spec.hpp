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

// The execution knob every kernel takes without declaring it (kernels/api/bucketing.hpp): 0 or
// absent = the kernel's own path; N in [1, kMaxBucket] = a varlen batch run as dense batches padded
// to multiples of N rows, one launch each.
inline constexpr const char* kBucketKnob = "bucket";
inline constexpr int kMaxBucket = 1 << 20;

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

// The backward of attention (docs/design.md "Passes"): from Q, K, V, the forward's O and LSE and
// the incoming gradient dO, the gradients dQ [B, Sq, Hq, D], dK [B, Sk, Hkv, D] and dV
// [B, Sk, Hkv, Dv] in the problem's dtype (BSHD like their tensors). With GQA/MQA dK and dV sum over
// the query heads of a group. Rows with no visible key contribute nothing (zero gradients, never
// NaN). The kernel writes every element of dQ, dK and dV on each call (zeroing an accumulator is
// its own work, inside the timed region); fp32 accumulation inside is allowed.
struct BackwardArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;
  const void* d_o = nullptr;
  const float* lse = nullptr;  // [B, Hq, Sq], natural log, as the forward wrote it
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  float scale = 1.0f;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  void* stream = nullptr;
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
  // For a kernel whose output lands in memory of its own (a Python callable that returns a new
  // tensor): copies the last run's O into args.o, enqueued on args.stream. The engines call it after
  // the check run only, so the timed runs measure the kernel and not this copy.
  virtual void copy_out(const AttentionArgs& /*args*/) {}
  // For a kernel that runs on copies of its inputs (dense-bucketed execution, kernels/api/
  // bucketing.hpp): stages args' Q, K and V, enqueued on args.stream. The engines call it before the
  // check run; the inputs do not change after it, so the timed runs measure run() alone.
  virtual void copy_in(const AttentionArgs& /*args*/) {}
  // The backward pass, for kernels whose KernelSpec has `backward_why_not` and a problem it takes;
  // the same rules as run(). The forward that produced args.o and args.lse ran on this object.
  virtual std::size_t backward_workspace_bytes() const { return 0; }
  virtual void run_backward(const BackwardArgs& args);
  // copy_out's twin for the backward: a kernel whose gradients land in memory of its own (a Python
  // backward that returns dq, dk, dv) copies the last backward's into args.dq, dk and dv, enqueued on
  // args.stream. The engines call it after the check run only.
  virtual void copy_out_backward(const BackwardArgs& /*args*/) {}
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
  // Empty: the kernel has no backward pass, and its bwd and fwd+bwd cases are skipped with that
  // reason. Otherwise as why_not, asked only for problems whose pass has a backward.
  std::function<std::string(const Problem&, const Knobs&)> backward_why_not;
  // Empty: the engine's tolerance rule (2x cudnn.sdpa, else the dtype bound).
  std::function<StatedBound(const Problem&)> stated_bound;
  // Takes NSA's compressed-branch mask (Problem::compress). Off by default so that a kernel written
  // before the mask existed (a plug-in, a Python callable) refuses such problems instead of
  // computing them as unmasked.
  bool compressed_mask = false;
  // Takes NSA's selected branch (Problem::select), reading the index tensor of selected_blocks.hpp.
  // Off by default for the same reason.
  bool selected_branch = false;
  // Takes variable-length batches (Problem::varlen, packed rows); backward_why_not may still refuse
  // them for the backward.
  bool varlen = false;
};

// Why dense-bucketed execution of `k` cannot take `p` (bucketing.cpp): the bucket rules, then
// kernel_why_not of each dense batch.
std::string bucketed_why_not(const KernelSpec& k, const Problem& p, const Knobs& knobs);

// Why `k` cannot take `p` with `knobs`: a mask kind it does not implement, else its own why_not.
// Empty when it can. Every planner and listing asks through this.
inline std::string kernel_why_not(const KernelSpec& k, const Problem& p, const Knobs& knobs) {
  if (knob_value(knobs, kBucketKnob) != 0) return bucketed_why_not(k, p, knobs);
  if (p.compress.active() && !k.compressed_mask)
    return k.id + " does not implement NSA's compressed-branch mask (compress = " +
           std::to_string(p.compress.block) + "," + std::to_string(p.compress.stride) +
           "); `attnscope kernels` marks those that do in its cmp column";
  if (p.select.active() && !k.selected_branch)
    return k.id + " does not implement NSA's selected branch (select = " + std::to_string(p.select.block) +
           "," + std::to_string(p.select.count) +
           "); `attnscope kernels` marks those that do in its sel column";
  if (p.varlen.active() && !k.varlen)
    return k.id + " does not take variable-length batches (varlen, " + std::to_string(p.batch) +
           " sequences of " + std::to_string(p.total_q()) +
           " tokens); `attnscope kernels` marks those that do in its varlen column";
  return k.why_not ? k.why_not(p, knobs) : std::string{};
}

// Why `k` cannot run the backward of `p` (whose pass has one); empty when it can.
inline std::string backward_why_not(const KernelSpec& k, const Problem& p, const Knobs& knobs) {
  if (const int bucket = knob_value(knobs, kBucketKnob); bucket != 0)
    return "bucket = " + std::to_string(bucket) +
           ": dense-bucketed execution runs the forward only (pass = " + std::string(to_string(p.pass)) + ")";
  if (p.select.active())
    return "select = (" + std::to_string(p.select.block) + "," + std::to_string(p.select.count) +
           "): the selected branch is measured forward only (pass = " + std::string(to_string(p.pass)) + ")";
  if (!k.backward_why_not)
    return k.id + " has no backward pass (pass = " + std::string(to_string(p.pass)) +
           "); run it with pass = fwd";
  return k.backward_why_not(p, knobs);
}

inline void PreparedKernel::run_backward(const BackwardArgs&) {
  throw KernelError("this kernel has no backward pass");
}

}  // namespace attn
