// Adds the host time of a scope to one phase of a case (CasePhases), so that an exception leaving
// the stage still counts the time it took.
#pragma once
#include <optional>

#include "profiling/engine/sampler.hpp"

namespace attn {

class PhaseClock {
 public:
  explicit PhaseClock(std::optional<double>& phase) : m_phase(phase), m_t0(monotonic_seconds()) {}
  ~PhaseClock() { m_phase = m_phase.value_or(0.0) + (monotonic_seconds() - m_t0); }
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;

 private:
  std::optional<double>& m_phase;
  double m_t0;
};

// `other_s` = the case's wall time less the phases it recorded (never below 0).
inline void close_phases(CasePhases& p, double wall_s) {
  p.other_s.reset();
  const double rest = wall_s - phases_sum(p);
  p.other_s = rest > 0 ? rest : 0.0;
}

}  // namespace attn
