// Regression comparison of two runs (`attnscope compare`): cases paired by case_id, the ratio of
// medians with a noise-aware verdict, regressions first; Markdown, CSV and JSON forms.
// The rule is spelled out in docs/reports.md "compare".
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiling/result.hpp"

namespace attn {

enum class Verdict {
  slower,        // ratio beyond 1 + threshold and the difference beyond sigma x the combined noise
  failed,        // ok in BASE, mismatch/oom/fault/timeout/error in NEW
  missing,       // ok in BASE, skipped in NEW: no longer measured
  ambiguous,     // ratio beyond the threshold (either way) but within sigma x the combined noise
  faster,        // ratio below 1 / (1 + threshold) and beyond the noise
  same,          // ratio within [1 / (1 + threshold), 1 + threshold]
  fixed,         // failed in BASE, ok in NEW
  not_compared,  // no ok timing in either run (skipped in both, failed in both, ...)
};
std::string_view to_string(Verdict v);

struct CompareOptions {
  double threshold = 0.03;  // relative change that matters: 0.03 = 3%
  double sigma = 2.0;       // how many combined standard errors a change must exceed
  // BASE cases absent from NEW (or ok in BASE and skipped in NEW) are regressions unless this is
  // set: a NEW run that measured 2 of 24 cases must not pass as "no regression".
  bool allow_missing = false;
};

struct CompareRow {
  std::string case_id;
  std::string kernel;  // variant_label: the kernel id, or "fa2.mma@br=64" for a non-default variant
  std::string config;  // config_label of the NEW problem
  Status base_status = Status::ok, new_status = Status::ok;
  std::optional<double> base_ms, new_ms;        // medians [ms]
  std::optional<double> base_se_ms, new_se_ms;  // standard errors of the medians [ms]
  std::optional<double> ratio;                  // new / base median
  std::optional<double> z;                      // (new - base) / combined standard error; absent when it is 0
  Verdict verdict = Verdict::not_compared;
  std::string base_device, new_device;  // the device kind (name) each was measured on
};

struct OneSided {
  std::string case_id, kernel, config;
  Status status = Status::ok;
};

struct CompareReport {
  std::string base_label, new_label;  // file names or run ids, for the headings
  CompareOptions options;
  std::vector<CompareRow> rows;  // slower, failed, missing, ambiguous, faster, same, fixed, not_compared
  std::vector<OneSided> only_base, only_new;
  // Any slower or failed row, or (unless options.allow_missing) any missing BASE case.
  bool regressed() const;
  std::size_t count(Verdict v) const;
  // BASE cases NEW does not measure: only in BASE, or ok in BASE and skipped in NEW.
  std::size_t missing() const { return only_base.size() + count(Verdict::missing); }
  // "1 slower, 2 failed, 3 missing" (the parts that make a regression; "none" without any).
  std::string regression_counts() const;
  // Rows whose BASE and NEW ran on different device kinds (both known).
  std::size_t cross_device() const;
};

// The standard error of a case's median [ms]: median x noise_pct / 100 when noise_pct > 0 (the
// engine's robust estimate); else 1.2533 x IQR / 1.349 / sqrt(n) for n >= 8 with q1 < q3; else
// 1.2533 x std / sqrt(n) for n >= 2; else nullopt (spread unknown: counted as 0).
std::optional<double> median_standard_error(const TimingStats& t);

// Pairs by case_id (the order of `now` is kept inside each verdict group, ordered by ratio:
// the largest slowdown first, the largest speedup first among the faster).
CompareReport compare_results(const std::vector<CaseResult>& base, const std::vector<CaseResult>& now,
                              const CompareOptions& options);

// "3%", "3", "0.5%": a percentage, '%' optional, finite, > 0 and < 1000. nullopt otherwise.
std::optional<double> parse_threshold(std::string_view text);

std::string compare_markdown(const CompareReport& r);
// Header: verdict, case_id, kernel, config, base_status, new_status, base_ms, new_ms, base_se_ms,
// new_se_ms, ratio, change_pct, z; then one-sided cases with verdict only_base / only_new.
std::string compare_csv(const CompareReport& r);
std::string compare_json(const CompareReport& r);  // one object, pretty-printed, ends in "\n"

}  // namespace attn
