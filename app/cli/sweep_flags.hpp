// The sweep and protocol flags shared by `run` (and any subcommand that plans a sweep): each
// flag's raw text lands in a SweepOverrides, which profiling/sweep/overrides.hpp applies.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "profiling/sweep/overrides.hpp"

namespace attn {

// Registers --preset, --kernels, the axis flags (--batch --tokens --heads --hidden --heads-kv
// --seq --seq-q --seq-kv --head-dim --head-dim-v --dtype --causal --window), --backend,
// --baseline, --out, --force and the protocol flags (--warmup-ms --min-samples --max-samples
// --max-time-s --noise --l2 --graphs/--no-graphs --graph-batch --seed --no-check) on `cmd`.
// Values are stored as typed; apply_overrides() checks them and names the flag in errors.
// `o` must outlive the parse.
void add_sweep_flags(CLI::App& cmd, SweepOverrides& o);

}  // namespace attn
