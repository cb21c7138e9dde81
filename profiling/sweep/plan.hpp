// Planning: a SweepSpec expands to the ordered list of cases a run measures, each with a stable
// case id and, where a kernel cannot take it, the reason it is skipped.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "profiling/sweep/sweep_spec.hpp"

namespace attn {

// A sweep may not plan more cases than this (a typo in a range should not exhaust memory).
inline constexpr std::size_t kMaxPlannedCases = 1'000'000;

// Q, K, V and O of one problem may take at most this many bytes (1 TiB: more than any GPU or
// host here holds). Larger sizes are refused when planning, so nothing downstream (a worker's
// allocation, the supervisor's records) ever sees them.
inline constexpr double kMaxProblemBytes = 1099511627776.0;

// Per group, the product of its axes, crossed with spec.kernels in the given order, problem-major
// (all kernels of one problem are consecutive: the engine caches the reference per problem).
// Axis nesting, outermost first: dtype, causal, window, batch, heads, heads_kv, head_dim,
// head_dim_v, seq_q, seq_kv. Defaults: heads_kv = heads, seq_kv = seq_q, head_dim_v = head_dim,
// window none, causal 0, dtype fp16 (fp32 on the CPU backend); `tokens` gives batch = tokens/seq_q
// and `hidden` gives heads = hidden/head_dim (SpecError when not divisible). Cases with a repeated
// case_id are dropped (the first is kept). Each entry of spec.kernels is a kernel variant
// (profiling/sweep/variant.hpp): "ID" runs the kernel at each KnobSpec's default, "ID@k=v+k=v" with
// those knobs set; one case per (variant, problem). skip_reason is, in order: Problem::validate()'s
// message; "needs the <b> backend; this run uses <b2>"; the kernel's why_not(p, case knobs).
// SpecError: no kernels, an unknown kernel id (the message lists the registered ids), an unknown
// knob or a value outside its compiled values (the message lists what is allowed), malformed
// variant text, two entries that resolve to the same kernel and knobs, a baseline that is not one
// of the variants, a group missing seq/head_dim/batch/heads, too many cases, a problem past
// kMaxProblemBytes, and (spec.shapes_from_flags) a shape that fails Problem::validate().
std::vector<Case> plan(const SweepSpec& spec, Backend backend);

// Empty when at least one case of `cases` can run; otherwise why none can ("nothing to run: all
// 12 planned cases are skipped: 12 x needs the cuda backend; ..."), the distinct reasons with
// their counts. `note` (e.g. why the backend was chosen) is appended when not empty.
std::string nothing_to_run(const std::vector<Case>& cases, const std::string& note = {});

// Each knob at its KnobSpec default.
Knobs default_knobs(const KernelSpec& k);

// The canonical text hashed into the case id: every field of the case, fixed order and spelling,
// e.g. "case.v1|kernel=cpu.flash|knobs=block_k:64,block_q:64|b=1|hq=4|hkv=4|sq=128|sk=128|d=64|dv=64|
// dtype=fp32|causal=0|window=-1,-1|layout=bshd".
std::string canonical_case_text(const std::string& kernel, const Knobs& knobs, const Problem& p);

// 16 lowercase hex chars of FNV-1a 64 over canonical_case_text: stable across runs and machines.
std::string make_case_id(const std::string& kernel, const Knobs& knobs, const Problem& p);

// 16 lowercase hex chars of FNV-1a 64 over the ordered case ids of a whole plan: two runs (or
// shards) come from the same sweep exactly when their fingerprints match.
std::string plan_fingerprint(const std::vector<Case>& whole_plan);

}  // namespace attn
