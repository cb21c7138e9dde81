// ProgressReporter: the redrawn bar line, the plain per-case lines, and the ETA.
#include "app/cli/progress.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "reports/text_format.hpp"

namespace attn {

namespace {

constexpr int kBarWidth = 20;         // [columns] of the bar itself
constexpr int kDefaultColumns = 100;  // when the terminal size is unknown
constexpr std::array kStatusOrder{Status::ok,    Status::skipped, Status::mismatch, Status::oom,
                                  Status::fault, Status::timeout, Status::error};

double steady_now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

int terminal_columns(std::FILE* out) {
  winsize ws{};
  if (out != nullptr && ::ioctl(::fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return kDefaultColumns;
}

std::size_t digits(std::size_t n) { return std::to_string(n).size(); }

bool went_wrong(Status s) { return s != Status::ok && s != Status::skipped; }

}  // namespace

std::string format_clock(double seconds) {
  const auto s = static_cast<long long>(std::max(0.0, std::round(seconds)));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string progress_line(std::size_t k, std::size_t total, const CaseResult& r) {
  std::string s = fmt::format("[{:>{}}/{}] {} {}: {}", k, digits(total), total, variant_label(r),
                              config_label(r.problem, r.knobs), to_string(r.status));
  // fmt::format rather than "literal" + std::string: GCC 12 misreports -Wrestrict on the latter.
  if (r.timing) s += fmt::format(" {}", format_duration_ms(r.timing->median_ms));
  if (r.tflops) s += fmt::format(" {} TFLOPS", format_fixed4(*r.tflops));
  if (r.correctness && !r.correctness->pass)
    s += fmt::format(" rel_l2 {:.1e} > tol {:.1e}", r.correctness->rel_l2, r.correctness->tol);
  if (r.status != Status::ok && !r.reason.empty()) s += fmt::format(" ({})", one_line(r.reason));
  return s;
}

bool stderr_is_terminal() {
  if (::isatty(STDERR_FILENO) == 0) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

ProgressReporter::ProgressReporter(std::FILE* out, std::size_t total, bool interactive, Clock now_s,
                                   int columns)
    : m_out(out),
      m_total(total),
      m_interactive(interactive),
      m_now(now_s ? std::move(now_s) : Clock(steady_now_s)),
      m_columns(columns > 0 ? columns : (interactive ? terminal_columns(out) : kDefaultColumns)),
      m_start_s(m_now()) {}

void ProgressReporter::begin_case(std::size_t index, const std::string& label) {
  std::lock_guard lock(m_mutex);
  m_current = index;
  m_label = one_line(label);
  m_case_start_s = m_now();
  if (m_interactive) redraw_locked();
}

void ProgressReporter::end_case(const CaseResult& r) {
  std::lock_guard lock(m_mutex);
  const double now = m_now();
  // Clock time since begin_case, which includes what wall_s misses (worker start-up, transfer).
  m_finished_s += m_case_start_s ? now - *m_case_start_s : r.wall_s;
  m_case_start_s.reset();
  ++m_finished;
  for (std::size_t i = 0; i < kStatusOrder.size(); ++i)
    if (kStatusOrder[i] == r.status) ++m_status_counts[i];
  const std::string line = progress_line(m_finished, m_total, r);
  if (!m_interactive) {
    std::fprintf(m_out, "%s\n", line.c_str());
  } else {
    if (went_wrong(r.status)) std::fprintf(m_out, "\r\x1b[K%s\n", line.c_str());
    redraw_locked();
  }
  std::fflush(m_out);
}

void ProgressReporter::finish() {
  std::lock_guard lock(m_mutex);
  if (m_finished_called) return;
  m_finished_called = true;
  const std::string line = done_line_locked();
  std::fprintf(m_out, m_interactive ? "\r\x1b[K%s\n" : "%s\n", line.c_str());
  std::fflush(m_out);
}

std::optional<double> ProgressReporter::eta_s() const {
  std::lock_guard lock(m_mutex);
  return eta_locked(m_now());
}

std::optional<double> ProgressReporter::eta_locked(double now) const {
  if (m_finished == 0) return std::nullopt;
  const double mean = m_finished_s / static_cast<double>(m_finished);
  const std::size_t left = m_total > m_finished ? m_total - m_finished : 0;
  const double running = m_case_start_s ? now - *m_case_start_s : 0.0;
  return std::max(0.0, mean * static_cast<double>(left) - running);
}

std::string ProgressReporter::done_line_locked() const {
  std::string counts;
  for (std::size_t i = 0; i < kStatusOrder.size(); ++i) {
    if (m_status_counts[i] == 0) continue;
    counts +=
        fmt::format("{}{} {}", counts.empty() ? "" : ", ", m_status_counts[i], to_string(kStatusOrder[i]));
  }
  const double elapsed = m_now() - m_start_s;
  const std::string took = elapsed < 60 ? fmt::format("{:.1f} s", elapsed) : format_clock(elapsed);
  if (!counts.empty()) counts = fmt::format(" ({})", counts);
  return fmt::format("done: {} of {} cases in {}{}", m_finished, m_total, took, counts);
}

void ProgressReporter::redraw_locked() {
  const double now = m_now();
  const double frac = m_total == 0 ? 1.0 : std::min(1.0, static_cast<double>(m_finished) / m_total);
  const int filled = static_cast<int>(std::floor(frac * kBarWidth));
  const std::string bar =
      fmt::format("[{}{}]", std::string(filled, '#'), std::string(kBarWidth - filled, '-'));
  const std::size_t shown = std::min(m_total, m_current + 1);
  const std::string count = fmt::format("[{:>{}}/{}]", shown, digits(m_total), m_total);
  const auto eta_s = eta_locked(now);
  const std::string eta = eta_s ? format_clock(*eta_s) : "--:--";
  const std::string tail = fmt::format("  {} elapsed, ETA {}", format_clock(now - m_start_s), eta);
  // Keep the line one column short of the width so the terminal never wraps it.
  const std::size_t fixed = display_width(bar) + 1 + display_width(count) + 1 + display_width(tail);
  const std::size_t room = static_cast<std::size_t>(m_columns) > fixed + 1 ? m_columns - fixed - 1 : 0;
  const std::string label = shorten(m_label, room);
  std::fprintf(m_out, "\r%s %s %s%s\x1b[K", bar.c_str(), count.c_str(), label.c_str(), tail.c_str());
  std::fflush(m_out);
}

void ProgressObserver::case_started(std::size_t, const Case& c) {
  m_bar.begin_case(m_recorded, c.kernel + " " + config_label(c.problem, c.knobs));
}

void ProgressObserver::case_recorded(std::size_t, const CaseResult& r) {
  m_bar.end_case(r);
  ++m_recorded;
}

}  // namespace attn
