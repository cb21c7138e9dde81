// plan.jsonl in a run directory: the cases a run (or one shard of it) was asked to measure, so that
// --resume continues exactly that plan and `attnscope merge` can tell finished shards from gaps.
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "profiling/sweep/sweep_spec.hpp"
#include "profiling/worker/shard.hpp"

namespace attn {

struct PlanFile {
  Backend backend = Backend::cpu;
  bool debug_kernels = false;
  std::optional<Shard> shard;
  std::size_t plan_cases = 0;           // cases in the whole plan (all shards)
  std::string plan_id;                  // plan_fingerprint of the whole plan; empty in older files
  std::vector<Case> cases;              // this run's cases, in plan order
  std::vector<std::size_t> plan_index;  // each case's index in the whole plan
  // What a run of this plan needs besides its cases, so `run --resume` can start a directory that
  // `run --plan-only` left (no results yet): the protocol, the baseline, the plug-in libraries and
  // kernel sources the cases' kernels come from. Absent in files written before they were kept.
  std::optional<Protocol> protocol;
  std::string baseline;
  std::vector<std::string> plugins;
};

// Line 1: {"schema":"attnscope.plan.v1","record":"plan","backend","debug_kernels","plan_cases",
// "cases","shard":"k/n" (when sharded),"plan_id" (when known),"protocol","baseline","plugins" (when
// set)}; then one worker-protocol case line per case
// with its "index" in the whole plan. Written to a temporary file, fsynced and renamed into place, so the
// file is either the old one or the whole new one. Throws ResultsIoError.
void write_plan(const std::filesystem::path& file, const PlanFile& plan);

// Throws ResultsIoError (cannot read) or ResultsFormatError naming "file:line: field".
PlanFile read_plan(const std::filesystem::path& file);

}  // namespace attn
