// JSON form of the attnscope.result.v1 records (docs/design.md "Result records"): RunInfo and
// CaseResult to and from one JSON object each, with the rules every reader and writer shares.
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kernels/api/problem.hpp"
#include "profiling/result.hpp"

namespace attn {

// A record that is not valid attnscope.result.v1: the message names the field (dotted path, e.g.
// "case.timing.median_ms") and what was wrong; read_results() prefixes "file:line: ".
class ResultsFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Encoding rules:
// - every record carries "schema": "attnscope.result.v1" and "record": "run" | "case";
// - a std::nullopt field is omitted (never 0 or null); an object whose members are all absent is
//   omitted too (gpu.clocks, case.memory, case.clocks); peaks is always written, possibly {};
// - non-finite doubles are written as the strings "nan", "inf", "-inf" (JSON has no NaN) and read
//   back as such; a double field also accepts any JSON number;
// - on read, unknown fields are ignored, null counts as absent, a missing optional field stays
//   std::nullopt and a missing plain field keeps its default; schema, record, and for a case
//   case_id, kernel, problem and status are required.
nlohmann::json to_json(const RunInfo& run);
nlohmann::json to_json(const CaseResult& result);
RunInfo run_info_from_json(const nlohmann::json& j);
CaseResult case_result_from_json(const nlohmann::json& j);

// problem {batch, heads_q, heads_kv, seq_q, seq_kv, head_dim, head_dim_v, dtype, causal,
// window: [left, right], layout: "bshd"}. On read batch, heads_q, seq_q, head_dim and dtype are
// required; heads_kv, seq_kv and head_dim_v default to heads_q, seq_q and head_dim.
void to_json(nlohmann::json& j, const Problem& p);
void from_json(const nlohmann::json& j, Problem& p);

// The run record's protocol object {warmup_ms, min_samples, ...}, shared with the worker protocol
// (reports/worker_json.hpp). `path` prefixes field names in errors.
nlohmann::json protocol_to_json(const Protocol& p);
Protocol protocol_from_json(const nlohmann::json& j, const std::string& path);

// "run" or "case" after checking the schema tag; throws ResultsFormatError for anything else.
std::string record_kind(const nlohmann::json& j);

}  // namespace attn
