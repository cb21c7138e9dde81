// Slicing a plan for job arrays (--shard k/n) and naming devices (--devices all|0,2): the parts
// of a distributed run that must come out the same on every host that computes them.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "profiling/sweep/sweep_spec.hpp"

namespace attn {

struct Shard {
  int k = 1;  // 1-based: shards are 1/n .. n/n
  int n = 1;
  std::string text() const { return std::to_string(k) + "/" + std::to_string(n); }
};

// "2/4" -> {2, 4}. Throws SpecError naming --shard, the value and what is allowed (1 <= k <= n).
Shard parse_shard(std::string_view text);

// The plan indices shard `s` runs. Consecutive cases of one problem (the plan is problem-major)
// form a group and stay together, so the reference is computed once per problem; groups go
// round-robin: group g belongs to shard (g mod n) + 1. Every index lands in exactly one shard,
// and the result depends only on the plan.
std::vector<std::size_t> shard_indices(const std::vector<Case>& plan, const Shard& s);

// "0,2" -> {0, 2}; "all" -> 0 .. available-1. Throws SpecError naming --devices for an empty,
// negative, repeated or non-integer entry, and for "all" with available == 0 (`why_none` says why).
std::vector<int> parse_devices(std::string_view text, int available, const std::string& why_none);

}  // namespace attn
