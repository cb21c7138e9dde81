// ATTNSCOPE_TRACE_STAGES=1: the engine prints the host time of the steps inside a case's phases
// (the reference kernel, the wait for cuDNN's graph, the sampled rows, ...) to stderr, which a
// worker's log (workers.log) keeps. For finding where a phase's time goes (docs/PERF.md); off by
// default, and then a span costs one branch.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

#include "profiling/engine/sampler.hpp"

namespace attn {

inline bool stage_trace_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("ATTNSCOPE_TRACE_STAGES");
    return v != nullptr && *v != '\0' && std::string(v) != "0";
  }();
  return on;
}

// Prints "trace: <what> <ms> ms" when it leaves its scope (an exception included).
class StageTrace {
 public:
  explicit StageTrace(std::string what)
      : m_on(stage_trace_enabled()),
        m_what(m_on ? std::move(what) : std::string()),
        m_t0(m_on ? monotonic_seconds() : 0.0) {}
  ~StageTrace() {
    if (m_on) std::fprintf(stderr, "trace: %s %.2f ms\n", m_what.c_str(), 1e3 * (monotonic_seconds() - m_t0));
  }
  StageTrace(const StageTrace&) = delete;
  StageTrace& operator=(const StageTrace&) = delete;

 private:
  bool m_on;
  std::string m_what;
  double m_t0;
};

}  // namespace attn
