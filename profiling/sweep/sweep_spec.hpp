// A sweep as the user describes it (preset and/or CLI flags), and the planned cases it expands to.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/problem.hpp"
#include "profiling/protocol.hpp"
#include "profiling/sweep/varlen_spec.hpp"

namespace attn {

// One product of axes. An empty axis takes its default: heads_kv = heads, seq_kv = seq_q,
// head_dim_v = head_dim, window = none, compress = none, select = none, causal = 0, pass = fwd, dtype = fp16
// (fp32 on the CPU backend). With a compressed branch, seq_kv defaults to its block count at seq_q.
struct SweepGroup {
  std::vector<std::int64_t> batch, heads, heads_kv, seq_q, seq_kv, head_dim, head_dim_v;
  std::vector<DType> dtype;
  std::vector<int> causal;
  std::vector<Window> window;
  std::vector<Compress> compress;
  std::vector<Select> select;          // NSA's selected branch; empty: none
  std::vector<VarLenSpec> varlen;      // empty: dense
  std::vector<Pass> pass;              // empty: the forward only
  std::optional<std::int64_t> tokens;  // batch = tokens / seq_q (the FA2 "16k tokens" convention)
  std::optional<std::int64_t> hidden;  // heads = hidden / head_dim
};

struct SweepSpec {
  std::string name;
  std::string description;
  std::string source;  // preset path, or "command line"
  std::vector<std::string> kernels;
  // Per kernel, where a preset lists it ("file:line:col: "), so planning errors about a kernel
  // (unknown id, knob) point at its line; empty when the kernels come from --kernels.
  std::vector<std::string> kernel_where;
  std::string baseline;
  // Plug-in libraries the preset's kernels come from (`plugins = [...]`), resolved against the
  // preset's folder; loaded before planning, after ATTNSCOPE_PLUGIN_PATH and --plugin.
  std::vector<std::string> plugins;
  std::vector<SweepGroup> groups;
  Protocol protocol;
  std::optional<Backend> backend;
  std::string out_dir;
  bool force = false;
  // The axes were typed as flags (no preset): a shape no kernel can take (--heads 2 --heads-kv 3)
  // is a planning error, not a skipped case.
  bool shapes_from_flags = false;
};

struct Case {
  std::string case_id;  // stable hash of kernel, knobs and problem
  std::string kernel;
  Knobs knobs;
  Problem problem;
  std::string skip_reason;  // non-empty: planned as `skipped`
};

// A bad preset or flag. what() is the full user-facing message: "file:line: field 'x' = 'v': ...".
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace attn
