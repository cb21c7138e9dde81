// `attnscope compare BASE NEW`: the regression table; exit 1 when a case is slower beyond the
// threshold and the noise, newly fails, or is missing from NEW (unless --allow-missing), 0
// otherwise, 2 on bad input.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "app/cli/commands.hpp"
#include "app/cli/report_commands.hpp"
#include "reports/compare.hpp"
#include "reports/result_set.hpp"

namespace attn::cli {

CLI::App* add_compare_command(CLI::App& app, CompareCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two runs case by case; exit 1 when a case is slower beyond the threshold and the noise, "
      "newly fails, or is missing from NEW");
  cmd->add_option("base", o.base, "the reference run: a run directory or results .jsonl")
      ->required()
      ->type_name("BASE");
  cmd->add_option("new", o.now, "the run to judge: a run directory or results .jsonl")
      ->required()
      ->type_name("NEW");
  cmd->add_option("--threshold", o.threshold, "relative change that matters, a percentage (default 3%)")
      ->type_name("PCT");
  cmd->add_option(
         "--sigma", o.sigma,
         "a change must also exceed this many combined standard errors of the two medians (default 2)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--format", o.format, "output format: md, csv or json (default md)")
      ->check(CLI::IsMember({"md", "csv", "json"}));
  cmd->add_option("-o,--out", o.out, "write the table to FILE instead of stdout")->type_name("FILE");
  cmd->add_flag("--allow-missing", o.allow_missing,
                "BASE cases that NEW lacks (or skips) are not a regression (default: they are)");
  return cmd;
}

int compare_runs(const CompareCommandOptions& o) {
  const auto threshold = parse_threshold(o.threshold);
  if (!threshold) {
    std::fprintf(
        stderr,
        "attnscope compare: --threshold '%s': not a percentage; expected a number > 0 and < 1000 with "
        "an optional %%, like 3%% or 0.5\n",
        o.threshold.c_str());
    return kExitBadInput;
  }
  ResultSet base, now;
  try {
    base = load_result_set({o.base});
    now = load_result_set({o.now});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope compare: %s\n", e.what());
    return kExitBadInput;
  }
  CompareOptions co;
  co.threshold = *threshold;
  co.sigma = o.sigma;
  co.allow_missing = o.allow_missing;
  CompareReport rep = compare_results(base.cases, now.cases, co);
  rep.base_label = base.sources.front().file.string() + " (" + base.primary().run_id + ")";
  rep.new_label = now.sources.front().file.string() + " (" + now.primary().run_id + ")";
  const std::string text = o.format == "csv"    ? compare_csv(rep)
                           : o.format == "json" ? compare_json(rep)
                                                : compare_markdown(rep);
  for (const auto* set : {&base, &now})
    for (const auto& w : set->warnings) std::fprintf(stderr, "attnscope compare: warning: %s\n", w.c_str());
  if (o.out.empty()) {
    std::fputs(text.c_str(), stdout);
  } else {
    std::ofstream f(o.out, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) {
      std::fprintf(stderr, "attnscope compare: cannot write %s\n", o.out.c_str());
      return kExitBadInput;
    }
  }
  std::string missing;
  if (const std::size_t n = rep.missing(); n > 0)
    missing = o.allow_missing
                  ? fmt::format("; {} of {} BASE cases not measured in NEW (allowed by --allow-missing)", n,
                                base.cases.size())
                  : fmt::format(
                        "; {} of {} BASE cases not measured in NEW (a regression; pass --allow-missing "
                        "to accept)",
                        n, base.cases.size());
  std::fprintf(
      stderr,
      "attnscope compare: %zu slower, %zu failed, %zu missing, %zu ambiguous, %zu faster, %zu same%s%s\n",
      rep.count(Verdict::slower), rep.count(Verdict::failed), rep.missing(), rep.count(Verdict::ambiguous),
      rep.count(Verdict::faster), rep.count(Verdict::same), missing.c_str(),
      rep.regressed() ? fmt::format(" -> exit 1 (regression: {})", rep.regression_counts()).c_str() : "");
  return rep.regressed() ? kExitCaseFailed : kExitOk;
}

}  // namespace attn::cli
