// Crossover finder (`attnscope crossover`): per group of the other axes, the smallest value of one
// axis from which kernel A beats kernel B by a headroom at every larger swept value, and the TOML
// snippet of those thresholds (the form seed 002 tunes fa2_min_len_win / fa2_min_len_cmp with).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profiling/result.hpp"

namespace attn {

// `window`: the left side w of sliding windows (w, R), the NSA sliding branch's window length.
enum class CrossAxis { seq, seq_q, seq_kv, head_dim, head_dim_v, batch, heads, heads_kv, window };
std::string_view to_string(CrossAxis a);
std::optional<CrossAxis> parse_cross_axis(std::string_view s);
inline constexpr const char* kCrossAxisAllowed =
    "seq, seq_q, seq_kv, head_dim, head_dim_v, batch, heads, heads_kv, window";

struct CrossoverOptions {
  std::string a, b;  // variant labels (a kernel id, or "fa2.mma@br=64"): A the candidate, B the incumbent
  CrossAxis axis = CrossAxis::seq;
  double headroom = 1.1;  // A must be at least this many times faster (B median / A median)
  std::string key;        // TOML key of the threshold; empty = "min_<axis>"
  // Only problems whose mask label (Problem::mask_label) starts with this: "cmp" for the
  // compressed branch, "causal+win" for causal windows; empty = every problem.
  std::string mask;
};

struct CrossoverPoint {
  std::int64_t value = 0;  // the axis value
  double a_ms = 0, b_ms = 0;
  double speedup = 0;  // b_ms / a_ms
};

struct CrossoverGroup {
  std::string label;  // "fp16 causal D=128 tokens=16384"
  // The fields that identify the group, as TOML key and value text ("dtype", "\"fp16\"").
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<CrossoverPoint> points;  // by ascending axis value; both kernels ok there
  std::optional<std::int64_t> threshold;
  std::size_t unpaired = 0;  // axis values where only one of the two kernels has an ok median
};

struct CrossoverResult {
  CrossoverOptions options;
  bool tokens_convention = false;      // batch was read as tokens = B x Sq (B followed the axis)
  bool hidden_convention = false;      // heads was read as hidden = Hq x D
  std::vector<CrossoverGroup> groups;  // in order of first appearance
  std::string key() const;
};

// A's and B's ok cases (matched by variant_label, so a plain id means the kernel at its default
// knobs; the fastest median where several cases share a problem) grouped by every problem field
// except the axis. Derived axes: when the axis is seq/seq_q and B x Sq takes
// fewer distinct values than B across these cases, the batch is keyed as tokens = B x Sq (the
// FA2 "16k tokens" sweeps); likewise heads as hidden = Hq x D when the axis is head_dim. Heads_kv
// is keyed as the group size Hq / Hkv; seq_kv (head_dim_v) as "tied" when it equals seq_q
// (head_dim) and the axis is seq (head_dim). Throws std::invalid_argument when A or B has no ok
// case (naming the kernels that do), or A == B, or headroom <= 0.
CrossoverResult find_crossovers(const std::vector<CaseResult>& cases, const CrossoverOptions& options);

// The TOML snippet: a comment with the rule and `source`, a [crossover] table (a, b, axis,
// headroom); one group: `<key> = value` in it; several: a [[crossover.group]] per group with the
// fields that differ between groups, `found`, `<key>` and `speedup` (A over B at the threshold).
std::string crossover_toml(const CrossoverResult& r, const std::string& source);

// A table for the terminal: per group its threshold and the speedup at every swept value.
std::string crossover_text(const CrossoverResult& r);

// The report section of the NSA playbook's template: per group a speedup table (axis value, both
// medians, speedup, whether A clears the headroom) and the chosen threshold, then the TOML snippet.
std::string crossover_markdown(const CrossoverResult& r, const std::string& source);

}  // namespace attn
