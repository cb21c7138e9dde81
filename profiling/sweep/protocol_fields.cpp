// Protocol field table and range checks (see protocol_fields.hpp).
#include "profiling/sweep/protocol_fields.hpp"

#include <charconv>
#include <cmath>

#include "profiling/metrics.hpp"
#include "profiling/sweep/quoted.hpp"

namespace attn {

namespace {

// Upper bounds that keep a typo (warmup_ms = 1e308) from turning into a case that never ends; each
// is far above any useful setting and shows in the field's `allowed` text.
constexpr double kMaxWarmup_ms = 60'000;         // [ms] one minute of warm-up
constexpr double kMaxCooldown_ms = 60'000;       // [ms] one minute of idling per case
constexpr double kMaxTime_s = 3600;              // [s] one hour of sampling per case
constexpr std::int64_t kMaxSamples = 1'000'000;  // samples are kept in memory per case

}  // namespace

const std::vector<ProtocolField>& protocol_fields() {
  static const std::vector<ProtocolField> fields = {
      {"warmup_ms", "--warmup-ms", FieldKind::number, "a number of ms >= 0 and <= 60000",
       "warm-up time [ms] of back-to-back launches before sampling"},
      {"cooldown_ms", "--cooldown-ms", FieldKind::number, "a number of ms >= 0 and <= 60000",
       "GPU idle time [ms] before each case's warm-up (cuda backend), so that the clock state of the "
       "case before (a power cap lowers the clock over back-to-back kernels) does not carry over; 0 = none"},
      {"min_samples", "--min-samples", FieldKind::integer, "an integer >= 1 and <= 1000000",
       "never stop sampling before this many samples"},
      {"max_samples", "--max-samples", FieldKind::integer,
       "an integer >= 1 and <= 1000000, and >= min_samples", "hard cap on samples per case"},
      {"max_time_s", "--max-time-s", FieldKind::number, "a number of seconds > 0 and <= 3600",
       "sampling budget per case [s], warm-up excluded"},
      {"noise_pct", "--noise", FieldKind::number, "a percentage > 0 and <= 100",
       "stop once the relative standard error of the median is below this [%]"},
      {"l2", "--l2", FieldKind::choice, "cold or warm",
       "cold: flush L2 before every sample (outside the timed region); warm: do not"},
      {"graphs", "--graphs", FieldKind::boolean, "true or false",
       "batch launches into one CUDA graph per sample (for tiny cases)"},
      {"graph_batch", "--graph-batch", FieldKind::integer,
       "an integer >= 0 and <= 1000000 (0 = about 1 ms per sample)",
       "launches per CUDA graph; 0 chooses so that a sample lasts about 1 ms"},
      {"seed", "--seed", FieldKind::integer, "an integer >= 0", "seed of the input generator"},
      {"check", "--no-check", FieldKind::boolean, "true or false",
       "skip the correctness check before timing (results carry no correctness)"},
      {"metrics", "--metrics", FieldKind::choice, kMetricsRequestAllowed,
       "CUPTI hardware metrics pass after timing (cuda backend); docs/metrics.md"},
      {"metrics_replay", "--metrics-replay", FieldKind::choice, "auto, case or kernel",
       "how the metrics pass replays a case: case reruns it once per pass; kernel lets CUPTI save and "
       "restore its buffers (as ncu does); auto: kernel while the case writes at most 1 GiB"},
  };
  return fields;
}

const ProtocolField* find_protocol_field(std::string_view key) {
  for (const auto& f : protocol_fields())
    if (key == f.key) return &f;
  return nullptr;
}

namespace {

bool to_double(std::string_view s, double& v) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(v);
}

bool to_int(std::string_view s, std::int64_t& v) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

bool try_set_protocol_field(Protocol& p, std::string_view key, std::string_view text, AxisProblem& problem) {
  const ProtocolField* f = find_protocol_field(key);
  if (!f) {
    problem = {"unknown protocol field",
               "warmup_ms, cooldown_ms, min_samples, max_samples, max_time_s, noise_pct, l2, graphs, "
               "graph_batch, seed, check, metrics, metrics_replay"};
    return false;
  }
  problem.allowed = f->allowed;
  double d = 0;
  std::int64_t i = 0;
  switch (f->kind) {
    case FieldKind::number:
      if (!to_double(text, d)) {
        problem.what = quoted(text) + " is not a number";
        return false;
      }
      break;
    case FieldKind::integer:
      if (!to_int(text, i)) {
        problem.what = quoted(text) + " is not an integer";
        return false;
      }
      break;
    case FieldKind::boolean: {
      std::vector<int> b;
      AxisProblem bp;
      if (!try_parse_bool_axis(text, b, bp) || b.size() != 1) {
        problem.what = quoted(text) + " is not true or false";
        return false;
      }
      i = b.front();
      break;
    }
    case FieldKind::choice:
      break;
  }
  auto out_of_range = [&](std::string_view shown) {
    problem.what = quoted(shown) + " is out of range";
    return false;
  };
  const std::string_view k = key;
  if (k == "warmup_ms") {
    if (d < 0 || d > kMaxWarmup_ms) return out_of_range(text);
    p.warmup_ms = d;
  } else if (k == "cooldown_ms") {
    if (d < 0 || d > kMaxCooldown_ms) return out_of_range(text);
    p.cooldown_ms = d;
  } else if (k == "min_samples") {
    if (i < 1 || i > kMaxSamples) return out_of_range(text);
    p.min_samples = static_cast<int>(i);
  } else if (k == "max_samples") {
    if (i < 1 || i > kMaxSamples) return out_of_range(text);
    p.max_samples = static_cast<int>(i);
  } else if (k == "max_time_s") {
    if (d <= 0 || d > kMaxTime_s) return out_of_range(text);
    p.max_time_s = d;
  } else if (k == "noise_pct") {
    if (d <= 0 || d > 100) return out_of_range(text);
    p.noise_pct = d;
  } else if (k == "l2") {
    const auto m = parse_l2_mode(text);
    if (!m) {
      problem.what = quoted(text) + " is not an L2 mode";
      return false;
    }
    p.l2 = *m;
  } else if (k == "graphs") {
    p.graphs = i != 0;
  } else if (k == "graph_batch") {
    if (i < 0 || i > kMaxSamples) return out_of_range(text);
    p.graph_batch = static_cast<int>(i);
  } else if (k == "seed") {
    if (i < 0) return out_of_range(text);
    p.seed = static_cast<std::uint64_t>(i);
  } else if (k == "check") {
    p.check = i != 0;
  } else if (k == "metrics_replay") {
    const auto m = parse_metrics_replay(text);
    if (!m) {
      problem.what = quoted(text) + " is not a replay mode";
      return false;
    }
    p.metrics_replay = *m;
  } else if (k == "metrics") {
    MetricsRequest request;
    std::string why;
    if (!parse_metrics_request(text, request, why)) {
      problem.what = why;
      return false;
    }
    if (!request.extra.empty()) {
      if (const std::string unknown = metric_catalogue_problem(request.extra); !unknown.empty()) {
        problem.what = unknown;
        return false;
      }
    }
    p.metrics = std::string(text);
  }
  return true;
}

std::string protocol_consistency_problem(const Protocol& p) {
  if (p.max_samples < p.min_samples)
    return "max_samples = " + std::to_string(p.max_samples) +
           " is below min_samples = " + std::to_string(p.min_samples);
  return {};
}

}  // namespace attn
