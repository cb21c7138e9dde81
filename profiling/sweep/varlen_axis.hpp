// The `varlen` sweep axis: how a variable-length batch's sequence lengths are drawn (Problem::VarLen).
// Every kind draws `batch` lengths from the group's seq value as the cap, Sq = Sk per sequence:
//   none                 dense (the default)
//   uniform[:LO]         uniform in [LO, seq] (LO = 1)
//   lognormal:MEAN:SIGMA lognormal with mean MEAN tokens and log-spread SIGMA, clipped to [1, seq]
//   list:L1,L2,...       these lengths, cycled over the batch, clipped to [1, seq]
//   file:PATH            lengths drawn from the integers in PATH (real length traces), clipped
// Each may end in @SEED; without it the run's input seed is used. The draw is ours (splitmix64,
// Box-Muller), so a seed gives the same lengths on every machine.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiling/sweep/axis_parse.hpp"
#include "profiling/sweep/varlen_spec.hpp"

namespace attn {

extern const char* const kVarLenAxisAllowed;

bool try_parse_varlen(std::string_view text, VarLenSpec& out, AxisProblem& problem);
// Items separated by ';' ("uniform;lognormal:512:0.6;none").
bool try_parse_varlen_axis(std::string_view text, std::vector<VarLenSpec>& out, AxisProblem& problem);
std::vector<VarLenSpec> parse_varlen_axis(std::string_view text, std::string_view field);
std::string format_varlen(const VarLenSpec& v);
std::string format_varlen_axis(const std::vector<VarLenSpec>& v);

// "list:L1,L2,..." of a varlen problem's lengths: the axis value that plans exactly this problem
// again (its seq being the longest), for the ncu and re-run commands of a record.
std::string varlen_list_text(const Problem& p);

// `batch` lengths for a group whose seq value is `cap`; `run_seed` when the spec names none. Throws
// SpecError (naming `where`) for a file that cannot be read or holds no positive integer.
std::vector<std::int64_t> draw_lengths(const VarLenSpec& v, std::int64_t batch, std::int64_t cap,
                                       std::uint64_t run_seed, const std::string& where);

}  // namespace attn
