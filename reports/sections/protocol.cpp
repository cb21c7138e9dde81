// Report section: the measurement protocol of each source run, and what the cases observed of it.
#include <fmt/format.h>

#include <set>

#include "reports/case_query.hpp"
#include "reports/sections/section.hpp"
#include "reports/sections/section_util.hpp"
#include "reports/text_format.hpp"

namespace attn {

namespace {

std::string protocol_text(const Protocol& p, const std::string& backend) {
  std::string out;
  const bool gpu = backend != "cpu";
  out += fmt::format(
      "- Timing: {}{}.\n",
      gpu ? "CUDA events around each launch on one stream" : "the host's steady clock around each call",
      p.graphs ? fmt::format(", launches batched into one CUDA graph per sample ({})",
                             p.graph_batch > 0 ? fmt::format("{} launches", p.graph_batch)
                                               : std::string("about 1 ms per sample"))
               : std::string(", one launch per sample"));
  if (gpu && p.cooldown_ms > 0)
    out += fmt::format(
        "- Cool-down: the GPU idles {} ms before each case's warm-up, so that the clock state of "
        "the case before does not carry over.\n",
        format_fixed4(p.cooldown_ms));
  out += fmt::format("- Warm-up: {} ms of back-to-back launches (at least one) before sampling.\n",
                     format_fixed4(p.warmup_ms));
  out += fmt::format(
      "- Samples: at least {}, at most {}; sampling stops when the relative standard error of the median "
      "is at most {}% or after {} s (then with at least 3 samples, `converged` = false).\n",
      p.min_samples, p.max_samples, format_fixed4(p.noise_pct), format_fixed4(p.max_time_s));
  out += fmt::format(
      "- Inputs: standard normal, seed {}, rounded to the dtype; the output is poisoned (NaN) "
      "before the check run.\n",
      p.seed);
  out += gpu ? fmt::format("- L2: {}.\n",
                           p.l2 == L2Mode::cold
                               ? "cold: a buffer of twice the L2's size is read through L2 before every "
                                 "sample (evicting the case's lines), outside the timed region"
                               : "warm: no flush between samples")
             : std::string();
  out += fmt::format("- Check: {}.\n",
                     p.check ? "every case is checked against a reference before it is timed; a "
                               "mismatch is recorded and not timed"
                             : "off (--no-check): nothing was checked");
  if (gpu && p.metrics != "none")
    out += fmt::format(
        "- Metrics pass: after timing, replay `{}` ({}).\n", to_string(p.metrics_replay),
        p.metrics_replay == MetricsReplay::whole_case ? "the case runs again once per CUPTI pass"
        : p.metrics_replay == MetricsReplay::kernel
            ? "CUPTI saves and restores each kernel's buffers and replays it, as ncu does"
            : "kernel replay while the case writes at most 1 GiB, else the case runs again once per pass");
  out +=
      "- Excluded from the timed region: host-device copies, input generation, the reference and the check, "
      "the L2 flush, and hardware-counter replay.\n";
  return out;
}

bool same_protocol(const Protocol& a, const Protocol& b) {
  return a.warmup_ms == b.warmup_ms && a.cooldown_ms == b.cooldown_ms && a.min_samples == b.min_samples &&
         a.max_samples == b.max_samples && a.max_time_s == b.max_time_s && a.noise_pct == b.noise_pct &&
         a.l2 == b.l2 && a.graphs == b.graphs && a.graph_batch == b.graph_batch && a.seed == b.seed &&
         a.check == b.check && a.metrics == b.metrics && a.metrics_replay == b.metrics_replay;
}

}  // namespace

std::string protocol_section(const ReportContext& ctx) {
  const ResultSet& set = ctx.set;
  std::string out = "## Protocol\n\n" + protocol_text(set.primary().protocol, set.primary().backend);
  std::vector<int> samples;
  std::size_t ok = 0, converged = 0;
  std::set<std::string> references;
  for (const CaseResult& c : set.cases) {
    if (c.correctness && !c.correctness->reference.empty()) references.insert(c.correctness->reference);
    if (!is_measured(c)) continue;
    ++ok;
    samples.push_back(c.timing->samples);
    if (c.timing->converged) ++converged;
  }
  if (!samples.empty()) {
    std::sort(samples.begin(), samples.end());
    out += fmt::format(
        "- Observed: {} to {} samples per measured case (median {}); {} of {} measured cases "
        "reached the noise target.\n",
        samples.front(), samples.back(), samples[samples.size() / 2], converged, ok);
  }
  if (!references.empty()) {
    std::string list;
    for (const auto& r : references) list += (list.empty() ? "`" : ", `") + r + "`";
    out += "- References used by the checks: " + list + ".\n";
  }
  for (std::size_t i = 1; i < set.sources.size(); ++i) {
    const ResultSource& s = set.sources[i];
    if (same_protocol(s.run.protocol, set.primary().protocol)) {
      out += fmt::format("- `{}` used the same protocol.\n", display_name(s.file));
    } else {
      out += fmt::format("\nProtocol of `{}`:\n\n", display_name(s.file));
      out += protocol_text(s.run.protocol, s.run.backend);
    }
  }
  return out + "\n";
}

}  // namespace attn
