// The launch-argument checks several kernel families share, each returning the why_not reason
// (empty when the problem passes) in one wording: the field, its value, the kernel, what it takes.
// A family's why_not chains these first and keeps only its own rules (head dims, tiles).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "kernels/api/kernel_spec.hpp"

namespace attn {

// fp16 or bf16 inputs (the tensor-core kernels).
inline std::string half_dtype_why_not(const Problem& p, const std::string& id) {
  if (p.dtype == DType::fp16 || p.dtype == DType::bf16) return {};
  return "dtype = " + std::string(to_string(p.dtype)) + ": " + id + " takes fp16 and bf16";
}

// fp16 accumulation: the MMA instruction `instr` offers it for fp16 inputs only.
inline std::string acc_f16_dtype_why_not(const Problem& p, const std::string& id, const std::string& instr,
                                         const std::string& instead) {
  if (p.dtype == DType::fp16) return {};
  return "dtype = " + std::string(to_string(p.dtype)) + ": " + id + " accumulates in fp16, which " + instr +
         " offers for fp16 inputs only; use " + instead;
}

inline std::string same_head_dims_why_not(const Problem& p, const std::string& id) {
  if (p.head_dim == p.head_dim_v) return {};
  return "head_dim_v = " + std::to_string(p.head_dim_v) + ": " + id + " needs head_dim_v == head_dim (" +
         std::to_string(p.head_dim) + ")";
}

// B on grid.z, Hq on grid.y, rows and keys indexed in int32 (the fa2/ffpa launch shape).
inline std::string grid_shape_why_not(const Problem& p, const std::string& id) {
  constexpr std::int64_t kMaxGridYZ = 65535;
  constexpr std::int64_t kMaxSeq = std::int64_t{1} << 30;
  if (p.batch > kMaxGridYZ || p.heads_q > kMaxGridYZ)
    return "batch = " + std::to_string(p.batch) + ", heads_q = " + std::to_string(p.heads_q) + ": " + id +
           " puts them on grid.z and grid.y, at most 65535 each";
  if (p.seq_q > kMaxSeq || p.seq_kv > kMaxSeq)
    return "seq_q = " + std::to_string(p.seq_q) + ", seq_kv = " + std::to_string(p.seq_kv) + ": " + id +
           " indexes rows in 32 bits, at most 2^30 each";
  return {};
}

// Knob `name` (its value in `knobs`, 0 when unset) is one of `allowed`; `takes` says what the
// values mean, e.g. "takes 0 (Q streamed) or 1 (Q in shared memory)".
inline std::string knob_choice_why_not(const Knobs& knobs, const std::string& name,
                                       const std::vector<int>& allowed, const std::string& id,
                                       const std::string& takes) {
  const int v = knob_value(knobs, name);
  for (int a : allowed)
    if (a == v) return {};
  return "knob " + name + " = " + std::to_string(v) + ": " + id + " " + takes;
}

// The first non-empty reason of `checks`, in order.
inline std::string first_reason(std::initializer_list<std::string> checks) {
  for (const std::string& why : checks)
    if (!why.empty()) return why;
  return {};
}

// run()'s argument checks: each throws KernelError naming the kernel, the argument and the rule.

// `why`, when given, says why the kernel needs it, e.g. "the running max is taken on unscaled scores".
inline void check_scale(const AttentionArgs& a, const std::string& id, const std::string& why = {}) {
  if (a.scale > 0.0f && std::isfinite(a.scale)) return;
  throw KernelError(id + ": scale = " + std::to_string(a.scale) + ": must be finite and > 0" +
                    (why.empty() ? "" : " (" + why + ")"));
}

// Q, K, V and O non-null and 16-byte aligned; `why` names what needs the alignment ("cp.async").
inline void check_io_aligned(const AttentionArgs& a, const std::string& id, const std::string& why) {
  for (const void* ptr : {a.q, a.k, a.v, static_cast<const void*>(a.o)})
    if (ptr == nullptr || reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0)
      throw KernelError(id + ": Q, K, V and O must be non-null and 16-byte aligned (" + why + ")");
}

inline void check_io_present(const AttentionArgs& a, const std::string& id) {
  if (!a.q || !a.k || !a.v || !a.o) throw KernelError(id + ": q, k, v and o must be device pointers");
}

// At least `need` bytes of workspace (none needed: anything goes).
inline void check_workspace(const AttentionArgs& a, std::size_t need, const std::string& id) {
  if (need == 0 || (a.workspace != nullptr && a.workspace_bytes >= need)) return;
  throw KernelError(id + ": workspace of " + std::to_string(a.workspace_bytes) + " bytes, needs " +
                    std::to_string(need));
}

// prepare()'s guard: the same refusal as why_not, as the Unsupported the engine records as skipped.
inline void require_supported(const std::string& why) {
  if (!why.empty()) throw Unsupported(why);
}

}  // namespace attn
