// Shell quoting and the sweep flags of a SweepOverrides (command_line.hpp).
#include "profiling/sweep/command_line.hpp"

#include <algorithm>
#include <optional>

namespace attn {

std::string shell_quote(std::string_view s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("-_.,:/=+@%").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(s);
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  q += '\'';
  return q;
}

std::string join_command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    s += shell_quote(a);
  }
  return s;
}

std::vector<std::string> sweep_args(const SweepOverrides& o, FlagStyle style) {
  std::vector<std::string> args;
  auto add = [&](const char* flag, const std::optional<std::string>& v) {
    if (!v) return;
    if (style == FlagStyle::joined) {
      args.push_back(std::string(flag) + "=" + *v);
    } else {
      args.emplace_back(flag);
      args.push_back(*v);
    }
  };
  add("--preset", o.preset);
  add("--backend", o.backend);
  add("--kernels", o.kernels);
  add("--baseline", o.baseline);
  add("--batch", o.batch);
  add("--tokens", o.tokens);
  add("--heads", o.heads);
  add("--hidden", o.hidden);
  add("--heads-kv", o.heads_kv);
  add("--seq", o.seq);
  add("--seq-q", o.seq_q);
  add("--seq-kv", o.seq_kv);
  add("--head-dim", o.head_dim);
  add("--head-dim-v", o.head_dim_v);
  add("--dtype", o.dtype);
  add("--causal", o.causal);
  add("--window", o.window);
  add("--compress", o.compress);
  add("--select", o.select);
  add("--varlen", o.varlen);
  add("--pass", o.pass);
  add("--warmup-ms", o.warmup_ms);
  add("--cooldown-ms", o.cooldown_ms);
  add("--min-samples", o.min_samples);
  add("--max-samples", o.max_samples);
  add("--max-time-s", o.max_time_s);
  add("--noise", o.noise);
  add("--l2", o.l2);
  add("--seed", o.seed);
  add("--metrics", o.metrics);
  add("--metrics-replay", o.metrics_replay);
  if (o.graphs) args.emplace_back(*o.graphs == "0" ? "--no-graphs" : "--graphs");
  add("--graph-batch", o.graph_batch);
  if (o.no_check && *o.no_check == "1") args.emplace_back("--no-check");
  add("--out", o.out);
  if (o.force && *o.force == "1") args.emplace_back("--force");
  return args;
}

}  // namespace attn
