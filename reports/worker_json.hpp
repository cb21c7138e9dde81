// The JSON wire format of the worker protocol (profiling/worker/protocol.hpp) and of plan.jsonl:
// setup and case lines (schema attnscope.worker.v1); device and result lines are the
// attnscope.result.v1 `run` and `case` records of result_json.hpp, so a worker's stdout is itself
// a valid results stream.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "profiling/sweep/sweep_spec.hpp"
#include "profiling/worker/protocol.hpp"

namespace attn {

inline constexpr std::string_view kWorkerSchema = "attnscope.worker.v1";

// {"schema":"attnscope.worker.v1","record":"case","case_id","kernel","knobs":{},"problem":{...}}
// plus "skip_reason" when non-empty. On read the case_id must match make_case_id() of the fields,
// so a supervisor and a worker of different versions cannot silently disagree on a case.
nlohmann::json case_to_json(const Case& c);
Case case_from_json(const nlohmann::json& j, const std::string& path);

// {"schema":"attnscope.worker.v1","record":"setup","backend","device","debug_kernels","protocol":{...}}
nlohmann::json setup_to_json(const WorkerSetup& s);
WorkerSetup setup_from_json(const nlohmann::json& j, const std::string& path);

class JsonWorkerCodec final : public WorkerCodec {
 public:
  std::string encode_setup(const WorkerSetup& setup) const override;
  std::string encode_case(const Case& c, const std::optional<Problem>& next_problem) const override;
  WorkerInput decode_input(std::string_view line) const override;
  std::string encode_device(const RunInfo& device) const override;
  RunInfo decode_device(std::string_view line) const override;
  std::string encode_result(const CaseResult& r) const override;
  CaseResult decode_result(std::string_view line) const override;
};

}  // namespace attn
