// Sweep and protocol flags on a CLI11 subcommand (see sweep_flags.hpp).
#include "app/cli/sweep_flags.hpp"

#include <string>

#include "profiling/sweep/protocol_fields.hpp"

namespace attn {

namespace {

constexpr const char* kSweepGroup = "Sweep";
constexpr const char* kProtocolGroup = "Measurement protocol";

void text_option(CLI::App& cmd, const std::string& name, std::optional<std::string>& slot,
                 const std::string& type, const std::string& help, const char* group) {
  cmd.add_option_function<std::string>(
         name, [&slot](const std::string& v) { slot = v; }, help)
      ->type_name(type)
      ->group(group);
}

// The SweepOverrides member of a valued protocol flag (by preset key), or nullptr.
std::optional<std::string>* protocol_slot(SweepOverrides& o, const std::string& key) {
  if (key == "warmup_ms") return &o.warmup_ms;
  if (key == "cooldown_ms") return &o.cooldown_ms;
  if (key == "min_samples") return &o.min_samples;
  if (key == "max_samples") return &o.max_samples;
  if (key == "max_time_s") return &o.max_time_s;
  if (key == "noise_pct") return &o.noise;
  if (key == "l2") return &o.l2;
  if (key == "graph_batch") return &o.graph_batch;
  if (key == "seed") return &o.seed;
  if (key == "metrics") return &o.metrics;
  if (key == "metrics_replay") return &o.metrics_replay;
  return nullptr;
}

}  // namespace

void add_sweep_flags(CLI::App& cmd, SweepOverrides& o) {
  const std::string ints = "; a list 64,128, a range 320:1024:64 (stop inclusive) or 512:16384:x2";
  text_option(cmd, "--preset", o.preset, "NAME|FILE",
              "sweep preset: a name from assets/presets (quick, cpu-quick, ...) or a .toml file; flags below "
              "override its fields",
              kSweepGroup);
  text_option(cmd, "--kernels", o.kernels, "ID[@K=V+...],...",
              "kernels to run, comma-separated (see `attnscope kernels`); replaces the preset's list. "
              "ID@knob=value+knob=value runs a variant with those knobs set (e.g. fa2.mma@br=64+bc=64); "
              "list one kernel several times to compare knob settings. Any kernel takes @bucket=N on varlen "
              "batches: dense batches padded to multiples of N rows, one launch each (causal or window "
              "right 0; records padding_waste)",
              kSweepGroup);
  text_option(cmd, "--batch", o.batch, "LIST", "batch sizes B" + ints + "; replaces tokens", kSweepGroup);
  text_option(cmd, "--tokens", o.tokens, "N", "total tokens per batch: B = N / seq_q; replaces --batch",
              kSweepGroup);
  text_option(cmd, "--heads", o.heads, "LIST", "query heads Hq" + ints + "; replaces hidden", kSweepGroup);
  text_option(cmd, "--hidden", o.hidden, "N", "model width: Hq = N / head_dim; replaces --heads",
              kSweepGroup);
  text_option(cmd, "--heads-kv", o.heads_kv, "LIST",
              "key/value heads Hkv (GQA/MQA when below Hq; default Hq)" + ints, kSweepGroup);
  text_option(cmd, "--seq", o.seq, "LIST", "sequence lengths, square problems (seq_q = seq_kv)" + ints,
              kSweepGroup);
  text_option(cmd, "--seq-q", o.seq_q, "LIST", "query lengths Sq" + ints, kSweepGroup);
  text_option(cmd, "--seq-kv", o.seq_kv, "LIST", "key/value lengths Sk (default Sq)" + ints, kSweepGroup);
  text_option(cmd, "--head-dim", o.head_dim, "LIST", "head dimension D of Q and K" + ints, kSweepGroup);
  text_option(cmd, "--head-dim-v", o.head_dim_v, "LIST", "head dimension Dv of V and O (default D)" + ints,
              kSweepGroup);
  text_option(cmd, "--dtype", o.dtype, "LIST",
              "element types: fp16,bf16,fp32 (default fp16 on cuda, fp32 on cpu)", kSweepGroup);
  text_option(cmd, "--causal", o.causal, "LIST", "causal mask (bottom-right aligned): 0, 1 or 0,1",
              kSweepGroup);
  text_option(cmd, "--window", o.window, "L[,R][;...]",
              "sliding windows: L,R keys left/right of the diagonal (-1 = unbounded); L alone = L,0; several "
              "separated by ';' (quote them); none = no window",
              kSweepGroup);
  text_option(cmd, "--compress", o.compress, "L,D[;...]",
              "NSA's compressed branch: keys are compressed blocks of L positions at stride D, query i sees "
              "block j iff j*D + L - 1 <= i; Sk defaults to the block count at Sq; several separated by ';'; "
              "none = off",
              kSweepGroup);
  text_option(
      cmd, "--select", o.select, "L,N[,SEED|,file:PATH][;...]",
      "NSA's selected branch: each query block of L rows attends (causally) to N key blocks of L keys, "
      "per KV head: the diagonal block, block 0 and N-2 drawn from SEED (default 0), or L,N,file:PATH (the "
      "index tensor [B,Hkv,ceil(S/L),N] from a .npy or text file); Sk = Sq; several separated by ';'; none = "
      "off",
      kSweepGroup);
  text_option(
      cmd, "--varlen", o.varlen, "KIND[;...]",
      "variable-length batches of `batch` sequences up to seq tokens (Sq = Sk each, packed): uniform[:LO], "
      "lognormal:MEAN:SIGMA, list:L1,L2,.. or file:PATH, each optionally @SEED (default: --seed); several "
      "separated by ';'; none = dense",
      kSweepGroup);
  text_option(cmd, "--pass", o.pass, "LIST",
              "which pass to measure: fwd, bwd (the backward alone, given the kernel's own forward's O and "
              "LSE) or fwd+bwd (both back to back); several separated by ','",
              kSweepGroup);
  text_option(cmd, "--backend", o.backend, "cpu|cuda",
              "where kernels run; kernels of the other backend are skipped", kSweepGroup);
  text_option(cmd, "--baseline", o.baseline, "KERNEL",
              "kernel (or variant, as written in --kernels) that speedups are measured against", kSweepGroup);
  text_option(cmd, "--out", o.out, "DIR", "results directory (default runs/<run-id>)", kSweepGroup);
  cmd.add_flag_callback(
         "--force", [&o] { o.force = "1"; }, "write into --out even if it already holds results")
      ->group(kSweepGroup);

  for (const ProtocolField& f : protocol_fields()) {
    const std::string flag = f.flag;
    std::string help = std::string(f.help) + " (preset key protocol." + f.key + "; " + f.allowed + ")";
    if (flag == "--graphs") {
      cmd.add_flag_function(
             "--graphs,!--no-graphs", [&o](std::int64_t n) { o.graphs = n > 0 ? "1" : "0"; }, help)
          ->group(kProtocolGroup);
    } else if (flag == "--no-check") {
      cmd.add_flag_callback(
             "--no-check", [&o] { o.no_check = "1"; },
             std::string(f.help) + " (preset key protocol.check = false)")
          ->group(kProtocolGroup);
    } else {
      const std::string key = f.key;
      std::optional<std::string>* slot = protocol_slot(o, key);
      if (!slot) throw std::logic_error("add_sweep_flags: protocol field '" + key + "' has no flag slot");
      const std::string type = key == "metrics"               ? "default|none|+NAME,..|NAME,.."
                               : f.kind == FieldKind::choice  ? "cold|warm"
                               : f.kind == FieldKind::integer ? "INT"
                                                              : "NUM";
      text_option(cmd, flag, *slot, type, help, kProtocolGroup);
    }
  }
}

}  // namespace attn
