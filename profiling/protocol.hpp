// The measurement protocol of a run (docs/design.md "Measurement protocol"): every field is a CLI flag
// and a preset key.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attn {

enum class L2Mode { cold, warm };
constexpr std::string_view to_string(L2Mode m) { return m == L2Mode::cold ? "cold" : "warm"; }
inline std::optional<L2Mode> parse_l2_mode(std::string_view s) {
  if (s == "cold") return L2Mode::cold;
  if (s == "warm") return L2Mode::warm;
  return std::nullopt;
}

// How the CUPTI metrics pass replays a case (docs/metrics.md "Replay"): `kernel` lets CUPTI save
// and restore every buffer a kernel may write and replay it once per pass (what ncu does); `case`
// runs the whole (idempotent) case once per pass, restoring nothing; `auto` takes kernel replay
// while the case writes at most kAutoKernelReplayBytes, else case replay.
enum class MetricsReplay { automatic, kernel, whole_case };
constexpr std::string_view to_string(MetricsReplay m) {
  return m == MetricsReplay::kernel ? "kernel" : m == MetricsReplay::whole_case ? "case" : "auto";
}
inline std::optional<MetricsReplay> parse_metrics_replay(std::string_view s) {
  if (s == "auto") return MetricsReplay::automatic;
  if (s == "kernel") return MetricsReplay::kernel;
  if (s == "case") return MetricsReplay::whole_case;
  return std::nullopt;
}
inline constexpr std::int64_t kAutoKernelReplayBytes = std::int64_t{1} << 30;

struct Protocol {
  double warmup_ms = 20.0;  // [ms] of back-to-back launches before sampling
  // [ms] the GPU idles before each case's warm-up, so that the power and clock state of the case
  // before does not carry over (under a power cap the first of back-to-back kernels runs at a
  // higher clock); 0 = none.
  double cooldown_ms = 0.0;
  int min_samples = 10;      // never stop before this many samples
  int max_samples = 2000;    // hard cap, bounds memory and time of tiny cases
  double max_time_s = 1.0;   // [s] sampling budget per case, warm-up excluded
  double noise_pct = 1.0;    // [%] target relative standard error of the median
  L2Mode l2 = L2Mode::cold;  // cold: flush L2 before every sample, outside the timed region
  bool graphs = false;       // batch launches into one CUDA graph per sample (tiny cases)
  int graph_batch = 0;       // launches per graph; 0 = choose so a sample lasts about 1 ms
  std::uint64_t seed = 42;
  bool check = true;  // run the correctness check before timing
  // CUPTI metrics pass after timing (docs/metrics.md): "default", "none", "+name,..." (default
  // set plus names) or "name,..." (only those). Syntax in profiling/metrics.hpp.
  std::string metrics = "default";
  MetricsReplay metrics_replay = MetricsReplay::automatic;
};

}  // namespace attn
