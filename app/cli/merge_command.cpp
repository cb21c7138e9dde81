// `attnscope merge`: joins the run directories of `run --shard k/n` jobs into one run directory
// (results.jsonl in plan order, results.csv, the summary), and says which shards or cases are
// missing. Inputs that are not shards of one plan are refused, naming what differs. Exit 0 when
// every planned case has a result, 1 when some are missing, 2 on bad input.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "app/cli/commands.hpp"
#include "reports/csv_writer.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/plan_store.hpp"
#include "reports/result_json.hpp"
#include "reports/summary_table.hpp"

namespace attn::cli {

namespace {

namespace fs = std::filesystem;

// The protocol fields that differ between two runs, "name a vs b, ...", leaving out `metrics`: the
// CUPTI pass runs after the timing, so it does not change what is compared across runs.
std::string timing_protocol_differences(const Protocol& a, const Protocol& b) {
  const nlohmann::json ja = protocol_to_json(a), jb = protocol_to_json(b);
  std::string out;
  for (const auto& [key, value] : ja.items()) {
    if (key == "metrics" || (jb.contains(key) && jb.at(key) == value)) continue;
    out += fmt::format("{}{} {} vs {}", out.empty() ? "" : ", ", key, value.dump(),
                       jb.contains(key) ? jb.at(key).dump() : "missing");
  }
  return out;
}

struct Input {
  fs::path dir;
  fs::path results;  // the results.jsonl read
  LoadedRun run;
  std::optional<PlanFile> plan;
};

class MergeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Input load_input(const std::string& arg) {
  Input in;
  const fs::path p = arg;
  const fs::path results = fs::is_directory(p) ? p / "results.jsonl" : p;
  in.dir = results.parent_path();
  in.results = results;
  if (!fs::exists(results)) throw MergeError(arg + ": no results.jsonl there (expected a run directory)");
  try {
    in.run = read_results(results);
  } catch (const std::exception& e) {
    throw MergeError(e.what());
  }
  for (const std::string& w : in.run.warnings) std::fprintf(stderr, "attnscope merge: %s\n", w.c_str());
  if (fs::exists(in.dir / "plan.jsonl")) {
    try {
      in.plan = read_plan(in.dir / "plan.jsonl");
    } catch (const std::exception& e) {
      throw MergeError(e.what());
    }
  }
  return in;
}

// The kernels a plan names, "a, b" (for telling two plans apart in a message).
std::string plan_kernels(const PlanFile& p) {
  std::set<std::string> ids;
  for (const Case& c : p.cases) ids.insert(c.kernel);
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out.empty() ? std::string("none") : out;
}

// Why `in` cannot be merged as a shard of the plan `ref` belongs to; empty when it can.
std::string not_a_shard_of(const Input& in, const Input& ref) {
  for (const Input* x : {&in, &ref}) {
    if (!x->plan) return x->dir.string() + " has no plan.jsonl, so nothing shows which plan it belongs to";
    if (!x->plan->shard)
      return fmt::format("{} is a whole run of a {}-case plan, not a --shard k/n job", x->dir.string(),
                         x->plan->plan_cases);
  }
  if (&in == &ref) return {};
  const PlanFile &a = *ref.plan, &b = *in.plan;
  std::string diff;
  auto differs = [&](const std::string& what) { diff += (diff.empty() ? "" : "; ") + what; };
  if (a.shard->n != b.shard->n)
    differs(fmt::format("shard {} vs shard {}", a.shard->text(), b.shard->text()));
  if (a.plan_cases != b.plan_cases)
    differs(fmt::format("a {}-case plan vs a {}-case plan", a.plan_cases, b.plan_cases));
  if (const std::string ka = plan_kernels(a), kb = plan_kernels(b);
      ka != kb && !a.cases.empty() && !b.cases.empty())
    differs(fmt::format("kernels {} vs {}", ka, kb));
  if (!a.plan_id.empty() && !b.plan_id.empty() && a.plan_id != b.plan_id)
    differs(fmt::format("plan fingerprint {} vs {} (the sweeps plan different cases)", a.plan_id, b.plan_id));
  return diff;
}

}  // namespace

void add_merge_flags(CLI::App& cmd, MergeOptions& o) {
  cmd.add_option("inputs", o.inputs, "run directories of the shards (or their results.jsonl files)")
      ->required()
      ->type_name("DIR");
  cmd.add_option("--out", o.out, "directory of the merged run")->required()->type_name("DIR");
  cmd.add_flag("--force", o.force, "overwrite --out if it already holds results");
  cmd.add_option("--plan", o.plan,
                 "plan.jsonl of the whole sweep (written by `attnscope slurm`): cases of shards that left "
                 "no directory are reported missing, and --out can be resumed")
      ->type_name("FILE");
}

int merge_runs(const MergeOptions& options) {
  std::vector<Input> inputs;
  std::optional<PlanFile> whole_plan;
  try {
    if (!options.plan.empty()) {
      try {
        whole_plan = read_plan(options.plan);
      } catch (const std::exception& e) {
        throw MergeError("--plan " + options.plan + ": " + std::string(e.what()));
      }
      if (whole_plan->shard)
        throw MergeError(fmt::format("--plan {}: this is the plan of shard {}; --plan takes the whole plan",
                                     options.plan, whole_plan->shard->text()));
    }
    for (const std::string& arg : options.inputs) inputs.push_back(load_input(arg));
    const RunInfo& first = inputs.front().run.run;
    for (const Input& in : inputs) {
      const RunInfo& r = in.run.run;
      if (r.backend != first.backend)
        throw MergeError(
            fmt::format("{}: backend {} differs from {}'s {}; only shards of one run can be merged",
                        in.dir.string(), r.backend, inputs.front().dir.string(), first.backend));
      if (const std::string diff = timing_protocol_differences(first.protocol, r.protocol); !diff.empty())
        throw MergeError(
            fmt::format("{}: its measurement protocol differs from {}'s ({}); only runs measured "
                        "alike can be merged",
                        in.results.string(), inputs.front().results.string(), diff));
      if (r.protocol.metrics != first.protocol.metrics)
        std::fprintf(stderr,
                     "attnscope merge: note: %s ran the metrics pass as '%s', %s as '%s'; timings are taken "
                     "before that pass, so they merge; each case keeps its own metrics status\n",
                     inputs.front().results.string().c_str(), first.protocol.metrics.c_str(),
                     in.results.string().c_str(), r.protocol.metrics.c_str());
    }
    // Several inputs must be shards of one plan: each k once, the same n and the same sweep.
    if (inputs.size() > 1) {
      std::set<int> ks;
      std::map<std::size_t, std::pair<std::string, const Input*>> by_index;  // plan index -> case id
      for (const Input& in : inputs) {
        const Input& other = &in == &inputs.front() ? inputs[1] : inputs.front();
        if (const std::string why = not_a_shard_of(in, inputs.front()); !why.empty())
          throw MergeError(fmt::format(
              "{} and {} are not shards of one plan: {}; merge joins the run directories of one sweep's "
              "`attnscope run --shard k/n` jobs (report and crossover read unrelated runs together)",
              in.dir.string(), other.dir.string(), why));
        if (!ks.insert(in.plan->shard->k).second)
          throw MergeError(
              fmt::format("{}: shard {} is given twice", in.dir.string(), in.plan->shard->text()));
        // Plans written before plan_id: the cases at one plan index must still agree.
        for (std::size_t i = 0; i < in.plan->cases.size(); ++i) {
          const auto [it, inserted] =
              by_index.emplace(in.plan->plan_index[i], std::pair{in.plan->cases[i].case_id, &in});
          if (!inserted && it->second.first != in.plan->cases[i].case_id)
            throw MergeError(fmt::format(
                "{} and {} are not shards of one plan: case {} of the plan is {} in one and {} in the other",
                it->second.second->dir.string(), in.dir.string(), in.plan->plan_index[i] + 1,
                it->second.first, in.plan->cases[i].case_id));
        }
      }
    }
    // --plan names the whole sweep: every shard must be a shard of it.
    for (const Input& in : inputs) {
      if (!whole_plan || !in.plan || !in.plan->shard) continue;
      const PlanFile& p = *in.plan;
      if (p.plan_cases != whole_plan->cases.size())
        throw MergeError(fmt::format("{}: shard {} of a {}-case plan is not a shard of --plan {} ({} cases)",
                                     in.dir.string(), p.shard->text(), p.plan_cases, options.plan,
                                     whole_plan->cases.size()));
    }
  } catch (const MergeError& e) {
    std::fprintf(stderr, "attnscope merge: %s\n", e.what());
    return kExitBadInput;
  }

  // Plan order where the shards' plans are known; inputs without a plan follow in their own order.
  std::map<std::string, std::size_t> position;
  std::size_t plan_cases = 0;
  PlanFile merged_plan;
  bool full_plan = true;
  std::set<int> shards_seen;
  int shard_n = 0;
  for (const Input& in : inputs) {
    if (!in.plan) {
      full_plan = false;
      continue;
    }
    plan_cases = in.plan->plan_cases;
    merged_plan.backend = in.plan->backend;
    merged_plan.plan_id = in.plan->plan_id;
    merged_plan.debug_kernels = merged_plan.debug_kernels || in.plan->debug_kernels;
    if (in.plan->shard) {
      shards_seen.insert(in.plan->shard->k);
      shard_n = in.plan->shard->n;
    }
    for (std::size_t i = 0; i < in.plan->cases.size(); ++i) {
      if (position.emplace(in.plan->cases[i].case_id, in.plan->plan_index[i]).second) {
        merged_plan.cases.push_back(in.plan->cases[i]);
        merged_plan.plan_index.push_back(in.plan->plan_index[i]);
      }
    }
  }
  // --plan fills in the cases of shards that wrote nothing, so they are counted missing.
  if (whole_plan) {
    full_plan = true;
    plan_cases = whole_plan->cases.size();
    merged_plan.backend = whole_plan->backend;
    merged_plan.debug_kernels = merged_plan.debug_kernels || whole_plan->debug_kernels;
    for (std::size_t i = 0; i < whole_plan->cases.size(); ++i)
      if (position.emplace(whole_plan->cases[i].case_id, whole_plan->plan_index[i]).second) {
        merged_plan.cases.push_back(whole_plan->cases[i]);
        merged_plan.plan_index.push_back(whole_plan->plan_index[i]);
      }
  }
  std::vector<std::pair<std::size_t, CaseResult>> ordered;
  std::set<std::string> seen;
  std::size_t duplicates = 0, unplanned = 0;
  for (const Input& in : inputs) {
    for (const CaseResult& r : in.run.cases) {
      if (!seen.insert(r.case_id).second) {
        ++duplicates;
        continue;
      }
      const auto it = position.find(r.case_id);
      if (it == position.end()) ++unplanned;
      ordered.emplace_back(it == position.end() ? SIZE_MAX : it->second, r);
    }
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CaseResult> results;
  for (auto& [pos, r] : ordered) results.push_back(std::move(r));

  const fs::path out = options.out;
  // The merged run is described by its earliest input (the measurements' time, not the merge's):
  // its environment, start and id with "-merged".
  const auto earliest = std::min_element(inputs.begin(), inputs.end(), [](const auto& a, const auto& b) {
    return a.run.run.started_at < b.run.run.started_at;  // ISO-8601 UTC: text order is time order
  });
  RunInfo run = earliest->run.run;
  run.run_id = run.run_id + "-merged";
  run.command_line = options.command_line;
  // Every input's devices, and the inputs' time totals added up (shards ran side by side: the wall
  // time is the longest shard's, the rest are sums).
  run.devices.clear();
  run.totals.reset();
  for (const auto& in : inputs) {
    const RunInfo& r = in.run.run;
    for (const RunDevice& d : r.devices) add_device(run.devices, d);
    if (r.totals) add_totals(run.totals ? *run.totals : run.totals.emplace(), *r.totals, true);
  }
  bool wrote_plan = false;
  try {
    JsonlWriter writer = JsonlWriter::create(out / "results.jsonl", run, options.force);
    for (const CaseResult& r : results) writer.append(r);
    writer.close();
    // With every shard's plan at hand, the merged directory can itself be resumed.
    if (full_plan && merged_plan.cases.size() == plan_cases && plan_cases > 0) {
      std::vector<std::size_t> order(merged_plan.cases.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return merged_plan.plan_index[a] < merged_plan.plan_index[b];
      });
      PlanFile sorted;
      sorted.backend = merged_plan.backend;
      sorted.debug_kernels = merged_plan.debug_kernels;
      sorted.plan_cases = plan_cases;
      sorted.plan_id = merged_plan.plan_id;
      for (std::size_t i : order) {
        sorted.cases.push_back(merged_plan.cases[i]);
        sorted.plan_index.push_back(merged_plan.plan_index[i]);
      }
      write_plan(out / "plan.jsonl", sorted);
      wrote_plan = true;
    }
    write_results_csv(out / "results.csv", results);
  } catch (const ResultsExistError& e) {
    std::fprintf(stderr, "attnscope merge: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope merge: cannot write %s: %s\n", out.c_str(), e.what());
    return kExitCaseFailed;
  }

  std::fputs(format_summary(results, run.baseline).c_str(), stdout);
  std::printf("merged %zu inputs: %zu cases -> %s\n", inputs.size(), results.size(),
              (out / "results.jsonl").c_str());
  int exit_code = kExitOk;
  if (duplicates)
    std::fprintf(stderr, "attnscope merge: %zu duplicate case lines dropped (first kept)\n", duplicates);
  if (unplanned)
    std::fprintf(stderr, "attnscope merge: %zu cases come from inputs without plan.jsonl\n", unplanned);
  if (shard_n > 0) {
    std::string missing;
    for (int k = 1; k <= shard_n; ++k)
      if (!shards_seen.count(k))
        missing += (missing.empty() ? "" : ", ") + std::to_string(k) + "/" + std::to_string(shard_n);
    if (!missing.empty()) {
      std::fprintf(stderr, "attnscope merge: missing shards: %s\n", missing.c_str());
      exit_code = kExitCaseFailed;
    }
  }
  // Missing cases by plan position, the first few by id, so a gap can be traced to its shard's log.
  std::vector<std::pair<std::size_t, std::string>> no_result;
  for (const auto& [id, pos] : position)
    if (!seen.count(id)) no_result.emplace_back(pos, id);
  std::sort(no_result.begin(), no_result.end());
  if (!no_result.empty()) {
    constexpr std::size_t kListed = 10;
    std::string ids;
    for (std::size_t i = 0; i < no_result.size() && i < kListed; ++i)
      ids += (i ? ", " : "") + no_result[i].second;
    if (no_result.size() > kListed) ids += fmt::format(", ... ({} more)", no_result.size() - kListed);
    std::fprintf(stderr, "attnscope merge: %zu planned cases have no result: %s\n", no_result.size(),
                 ids.c_str());
    if (wrote_plan)
      std::fprintf(stderr, "attnscope merge: run them with attnscope run --resume %s\n", out.c_str());
    else
      std::fprintf(stderr,
                   "attnscope merge: finish their shard with attnscope run --resume SHARD_DIR and merge "
                   "again (or pass --plan with the whole plan)\n");
    exit_code = kExitCaseFailed;
  }
  return exit_code;
}

}  // namespace attn::cli
