// Which pass of attention a case measures (docs/design.md "Passes"): the forward, the backward
// alone (given O and LSE from the same kernel's forward, computed outside the timed region), or
// both back to back, as a training step runs them.
#pragma once
#include <optional>
#include <string_view>

namespace attn {

enum class Pass { fwd, bwd, fwd_bwd };

constexpr std::string_view to_string(Pass p) {
  switch (p) {
    case Pass::fwd:
      return "fwd";
    case Pass::bwd:
      return "bwd";
    case Pass::fwd_bwd:
      return "fwd+bwd";
  }
  return "?";
}

inline constexpr const char* kPassAllowed = "fwd, bwd or fwd+bwd";

inline std::optional<Pass> parse_pass(std::string_view s) {
  if (s == "fwd" || s == "forward") return Pass::fwd;
  if (s == "bwd" || s == "backward") return Pass::bwd;
  if (s == "fwd+bwd" || s == "fwdbwd" || s == "fwd_bwd" || s == "both") return Pass::fwd_bwd;
  return std::nullopt;
}

constexpr bool has_backward(Pass p) { return p != Pass::fwd; }
constexpr bool has_forward(Pass p) { return p != Pass::bwd; }

// FLOPs of the pass over the forward's (the FlashAttention papers' convention: the backward's
// five GEMMs against the forward's two, 2.5x).
constexpr double pass_flop_factor(Pass p) {
  switch (p) {
    case Pass::fwd:
      return 1.0;
    case Pass::bwd:
      return 2.5;
    case Pass::fwd_bwd:
      return 3.5;
  }
  return 1.0;
}

}  // namespace attn
