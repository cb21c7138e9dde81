// Live progress of a sweep on a terminal (one bar line redrawn with \r) or in a log (one plain
// line per finished case, no control characters).
#pragma once
#include <array>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "profiling/result.hpp"
#include "reports/run_session.hpp"

namespace attn {

class ProgressReporter {
 public:
  using Clock = std::function<double()>;  // [s] monotonic

  // `total` cases will be reported. `interactive`: redraw one line (use stderr_is_terminal()).
  // `now_s` defaults to std::chrono::steady_clock; `columns` (0 = ask the terminal, else 100)
  // bounds the redrawn line so it never wraps.
  ProgressReporter(std::FILE* out, std::size_t total, bool interactive, Clock now_s = {}, int columns = 0);

  // Case `index` (0-based; shown as index + 1) starts; `label` names it on the live line.
  void begin_case(std::size_t index, const std::string& label);
  // A case finished. Plain mode prints progress_line(); interactive mode redraws the bar and
  // prints a permanent line above it for a case that went wrong (mismatch, oom, fault, timeout,
  // error) so it stays visible.
  void end_case(const CaseResult& r);
  // Ends the live line and prints "done: N cases in T (5 ok, 1 skipped)".
  void finish();

  // [s] estimated time left: mean duration of the finished cases x cases left, less the time the
  // current case has run; nullopt before the first case finishes. Skipped cases enter with their
  // own (short) durations, so they count little.
  std::optional<double> eta_s() const;

 private:
  void redraw_locked();
  std::optional<double> eta_locked(double now) const;
  std::string done_line_locked() const;

  std::FILE* m_out;
  std::size_t m_total;
  bool m_interactive;
  Clock m_now;
  int m_columns;
  double m_start_s;
  std::optional<double> m_case_start_s;  // [s] begin of the case on the live line
  std::size_t m_current = 0;             // 0-based index of that case
  std::string m_label;
  std::size_t m_finished = 0;
  double m_finished_s = 0;  // [s] summed durations of finished cases
  std::array<std::size_t, 7> m_status_counts{};
  bool m_finished_called = false;
  mutable std::mutex m_mutex;  // a supervisor may report from one thread per worker
};

// The progress bar as an observer of a RunSession: the live line per case started, a line or a
// redraw per case recorded.
class ProgressObserver final : public RunObserver {
 public:
  ProgressObserver(std::FILE* out, std::size_t total, bool interactive) : m_bar(out, total, interactive) {}
  void case_started(std::size_t index, const Case& c) override;
  void case_recorded(std::size_t index, const CaseResult& r) override;
  void finish() { m_bar.finish(); }

 private:
  ProgressReporter m_bar;
  std::size_t m_recorded = 0;
};

// "[  3/120] cpu.flash 1x2x64x32 fp32 full: ok 0.123 ms 0.050 TFLOPS": k (right-aligned to the
// width of `total`), the kernel and config_label(), the status, then what is known: the median,
// TFLOPS, a failed check's rel_l2 against its tol, and for a case that is not ok its reason.
std::string progress_line(std::size_t k, std::size_t total, const CaseResult& r);

// "0:07", "12:05", "1:02:03" for a duration in [s].
std::string format_clock(double seconds);

// True when stderr is a terminal that can redraw a line (isatty, and TERM is not "dumb").
bool stderr_is_terminal();

}  // namespace attn
