// Report section: the commands that wrote the results and this report, and per attnscope kernel
// a re-run and an Nsight Compute profile of its largest measured case (single_case_command).
#include <fmt/format.h>

#include <map>

#include "profiling/sweep/axis_parse.hpp"
#include "profiling/sweep/varlen_axis.hpp"
#include "reports/case_query.hpp"
#include "reports/sections/section.hpp"
#include "reports/sections/section_util.hpp"
#include "reports/text_format.hpp"

namespace attn {

std::string single_case_command(const CaseResult& c, const Protocol& p, const std::string& attnscope,
                                bool for_ncu) {
  const Problem& q = c.problem;
  std::string cmd = fmt::format("{} run --backend cuda --kernels {} --batch {} --heads {}", attnscope,
                                variant_label(c), q.batch, q.heads_q);
  if (q.heads_kv != q.heads_q) cmd += fmt::format(" --heads-kv {}", q.heads_kv);
  if (q.seq_kv == q.seq_q)
    cmd += fmt::format(" --seq {}", q.seq_q);
  else
    cmd += fmt::format(" --seq-q {} --seq-kv {}", q.seq_q, q.seq_kv);
  cmd += fmt::format(" --head-dim {}", q.head_dim);
  if (q.head_dim_v != q.head_dim) cmd += fmt::format(" --head-dim-v {}", q.head_dim_v);
  cmd += fmt::format(" --dtype {} --causal {}", to_string(q.dtype), q.causal ? 1 : 0);
  if (q.window.active()) cmd += fmt::format(" --window '{},{}'", q.window.left, q.window.right);
  if (q.compress.active()) cmd += fmt::format(" --compress '{},{}'", q.compress.block, q.compress.stride);
  if (q.select.active()) cmd += fmt::format(" --select '{}'", select_text(q.select));
  if (q.varlen.active()) cmd += " --varlen '" + varlen_list_text(q) + "'";
  if (for_ncu) {
    // One warm-up launch and one sample, nothing else on the GPU: the profile holds this kernel only.
    cmd +=
        fmt::format(" --no-check --warmup-ms 0 --min-samples 1 --max-samples 1 --l2 warm --seed {}", p.seed);
    cmd += fmt::format(" --out runs/ncu-{} --force", c.case_id);
    return fmt::format("ncu --set full --nvtx --nvtx-include 'regex:attnscope@.*/' -o ncu-{}-{} {}",
                       variant_label(c), c.case_id, cmd);
  }
  cmd += fmt::format(
      " --warmup-ms {} --min-samples {} --max-samples {} --max-time-s {} --noise {} --l2 {} --seed {}",
      format_fixed4(p.warmup_ms), p.min_samples, p.max_samples, format_fixed4(p.max_time_s),
      format_fixed4(p.noise_pct), to_string(p.l2), p.seed);
  if (p.graphs) cmd += fmt::format(" --graphs --graph-batch {}", p.graph_batch);
  if (!p.check) cmd += " --no-check";
  return cmd + fmt::format(" --out runs/repro-{}", c.case_id);
}

std::string reproducibility_section(const ReportContext& ctx) {
  const ResultSet& set = ctx.set;
  const ReportOptions& o = ctx.options;
  std::string out = "## Reproducibility\n\n";
  for (const ResultSource& s : set.sources) {
    out += fmt::format(
        "`{}` was written by:\n\n```sh\n{}\n```\n\n", display_name(s.file),
        s.run.command_line.empty() ? std::string("# (no command line recorded)") : s.run.command_line);
  }
  if (!o.report_command.empty()) out += fmt::format("This report:\n\n```sh\n{}\n```\n\n", o.report_command);
  // Per attnscope kernel, its largest measured case: a re-run and an Nsight Compute profile.
  // Records of other tools (tools/torch_sdpa.py) are reproduced with their own command above.
  std::vector<std::string> kernels;
  std::map<std::string, const CaseResult*> largest;
  std::map<std::string, const Protocol*> protocol_of;
  std::size_t offset = 0;
  for (const ResultSource& s : set.sources) {
    const bool ours = s.run.command_line.find("torch_sdpa.py") == std::string::npos;
    for (std::size_t i = offset; i < offset + s.cases; ++i) {
      const CaseResult& c = set.cases[i];
      if (!ours || !is_measured(c) || s.run.backend != "cuda") continue;
      add_unique(kernels, variant_label(c));
      const CaseResult*& best = largest[variant_label(c)];
      if (!best || c.flops > best->flops) best = &c, protocol_of[variant_label(c)] = &s.run.protocol;
    }
    offset += s.cases;
  }
  if (kernels.empty()) return out;
  out +=
      "One case per attnscope kernel (its largest measured case), re-measured alone and profiled with Nsight "
      "Compute (every GPU kernel inside attnscope's NVTX ranges, full section set):\n\n```sh\n";
  for (const auto& k : kernels) {
    out += single_case_command(*largest[k], *protocol_of[k], o.attnscope, false) + "\n";
    // The record's own ncu command (the metrics pass writes it) selects exactly its NVTX range.
    out += (largest[k]->ncu_command.empty()
                ? single_case_command(*largest[k], *protocol_of[k], o.attnscope, true)
                : largest[k]->ncu_command) +
           "\n";
  }
  return out + "```\n";
}

}  // namespace attn
