// What a case that threw becomes: `fault` when the CUDA context is gone (a sticky error: every
// later call fails the same way), `oom` with the device's free memory, else `error`.
#pragma once
#include <string>

#include "profiling/result.hpp"

namespace attn {

struct FailureVerdict {
  Status status = Status::error;
  std::string reason;
  // Non-empty for a fault: why the context is lost (the engine refuses later cases with it).
  std::string context_lost;
};

// `what`: the exception's message; `oom`: the exception said out-of-memory itself. Synchronises
// the device to see a sticky error the failing call did not report. `label` names the case in
// context_lost ("<kernel> <problem>").
FailureVerdict classify_failure(const std::string& label, const std::string& what, bool oom);

}  // namespace attn
