#!/usr/bin/env bash
# docs/examples/ from one H100 device call: the ffpa-large-d and fa2-tokens16k presets measured by
# attnscope, its own kernels and PyTorch's SDPA backends (the torch.* Python adapters, docs/python.md),
# then reports,
# the seed-000 figures, TFLOPS vs S and a crossover, generated here from what came back.
#
#   device:  scripts/report_examples.sh device .device/<you>
#            through the device tool with carry [".device/<you>"] (attnscope built for sm_90a);
#            at most ~550 s; writes $OUT/examples.tar.gz (and a copy of its device.log)
#   here:    scripts/report_examples.sh local <examples.tar.gz | the folder holding it>[:<another>] [build/attnscope]
#   EXAMPLES_ONLY=<preset> in device mode runs one preset with the whole budget; pass both archives here.
#
# Device steps, each under `timeout` so that it ends by a fixed point after the start (SIGINT:
# attnscope keeps every case measured so far; SIGKILL 10 s later); time a step
# leaves unused goes to the next. Ends [s after start; BUDGET = $EXAMPLES_BUDGET_S, default 560],
# the order being what the figures need most:
#   1. attnscope ffpa-large-d, default CUPTI metrics (the report's profiling summary)   by 291
#   2. torch.* adapters on ffpa-large-d, every backend (flash, cudnn take D <= 256)     by 341
#   3. attnscope fa2-tokens16k --metrics none (the metrics pass would double its time) by 459
#   4. torch.* adapters on fa2-tokens16k, every backend                               by 535
#   5. what is left: `attnscope run --resume` of a run that 1 or 3 cut                 by 535
# (52%, 61%, 82% of BUDGET and BUDGET - 25 s: the last step's SIGKILL grace and the archive fit.)
# The archive holds examples/{ffpa-large-d,fa2-tokens16k}/ (results.jsonl, plan.jsonl,
# workers.log), examples/torch-{ffpa-large-d,fa2-tokens16k}/results.jsonl and examples/device.log.
#
# Local output (the preset folders are replaced as a whole):
#   docs/examples/ffpa-large-d/  results.jsonl, torch.jsonl, report.md + figures/ (speedups vs
#     torch.efficient), and seed 000's figures under the seed's names: <GPU>.png (TFLOPS vs D),
#     <GPU>_ffpa.l1.acc_f16_Speedup.png and <GPU>_ffpa.l1.acc_f32_Speedup.png (bars, speedup over
#     torch.efficient, every variant of the kernel in the run); <GPU> = the GPU name
#     with '_' for spaces and '/', e.g. NVIDIA_H100_80GB_HBM3 (`attnscope plot`'s default names)
#   docs/examples/fa2-tokens16k/ results.jsonl, torch.jsonl, report.md + figures/ (speedups vs
#     cudnn.sdpa, TFLOPS vs S per D and mask), tflops_vs_s.png and tflops_vs_s_causal.png (D = 128,
#     the FA2 paper's panels), crossover.toml + crossover.png (cudnn.sdpa over torch.flash along S)
#   docs/examples/README.md      what each file is, the GPU and the date of the run
set -uo pipefail
MODE=${1:?device|local}

if [ "$MODE" = device ]; then
  BIN=$PWD/${2:?.device/<you>}/attnscope
  OUT=${OUT:-/tmp/out}
  BUDGET=${EXAMPLES_BUDGET_S:-560}  # [s] the whole call, archive included
  W=$(mktemp -d /tmp/report_examples.XXXXXX)/examples
  mkdir -p "$W" "$OUT"
  L=$W/device.log
  P=(--max-time-s 0.3)  # the same protocol flags for attnscope and torch, so `attnscope merge` joins them
  export ATTNSCOPE_PRESETS=$PWD/assets/presets
  T0=$(date +%s)
  log() { echo "$*" >> "$L"; }
  # step NAME END CMD...: runs CMD so that it ends by T0 + END [s].
  step() {
    local name=$1 end=$2
    shift 2
    local start left rc
    start=$(date +%s)
    left=$((T0 + end - start))
    if [ "$left" -lt 15 ]; then
      log "== $name: not run, ${left} s left of its budget (t=$((start - T0)) s)"
      return
    fi
    log "== $name (t=$((start - T0)) s, limit ${left} s): $*"
    timeout -s INT -k 10 "$left" "$@" >> "$L" 2>&1
    rc=$?
    RC=$rc
    log "== $name: rc=$rc elapsed=$(($(date +%s) - start)) s t=$(($(date +%s) - T0)) s$(cut $rc && echo ' (cut by its time limit)')"
  }
  cut() { [ "$1" = 124 ] || [ "$1" = 137 ]; }  # timeout's codes for SIGINT and SIGKILL
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,memory.used --format=csv,noheader; } > "$L" 2>&1
  [ -x "$BIN" ] || log "no attnscope at $BIN: the attnscope steps will fail"
  # attnscope needs the system cuDNN 9.14; PyTorch its bundled cuDNN: LD_LIBRARY_PATH only for attnscope
# (and unset for python3, should the machine set it).
  # EXAMPLES_RUN_FLAGS: more attnscope run flags (e.g. --metrics none, when the CUPTI pass does not fit the call).
  read -r -a XF <<< "${EXAMPLES_RUN_FLAGS:-}"
  A=(env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu "$BIN" run --quiet "${P[@]}" "${XF[@]}")
  RC=0
  # EXAMPLES_ONLY=ffpa-large-d or fa2-tokens16k: one preset per call, with the whole budget (when
  # one call cannot hold both; the local mode takes the two archives, see below).
  # EXAMPLES_FFPA_KERNELS=K1,K2: only these of ffpa-large-d's kernels in step 1; EXAMPLES_ONLY=
  # ffpa-large-d-extra runs the others (e.g. the @q_resident=1 variants) alone, into
  # ffpa-large-d-extra/, which the local mode merges into ffpa-large-d: when one call cannot hold
  # the whole preset.
  ONLY=${EXAMPLES_ONLY:-}
  E1=52 E2=61 E3=82
  [ "$ONLY" = ffpa-large-d ] && E1=80 E2=95
  [ "$ONLY" = fa2-tokens16k ] && E3=70
  KSEL=()
  [ -n "${EXAMPLES_FFPA_KERNELS:-}" ] && KSEL=(--kernels "$EXAMPLES_FFPA_KERNELS")
  # PyTorch's backends through attnscope, in Python workers (the package in python/ next to $BIN):
  # without LD_LIBRARY_PATH, so PyTorch runs on its own cuDNN.
  PY=(env -u LD_LIBRARY_PATH ATTNSCOPE_PYTHON=python3 "$BIN" run --quiet "${XF[@]}"
      --kernels torch.flash,torch.efficient,torch.cudnn,torch.math)
  RC_FFPA=0 RC_FA2=0
  if [ "$ONLY" = ffpa-large-d-extra ]; then
    step "attnscope ffpa-large-d (extra kernels)" $((BUDGET - 25)) "${A[@]}" --preset ffpa-large-d \
      --kernels "${EXAMPLES_FFPA_EXTRA:?the kernels to run}" --out "$W/ffpa-large-d-extra"
  elif [ "$ONLY" != fa2-tokens16k ]; then
    step "attnscope ffpa-large-d" $((BUDGET * E1 / 100)) "${A[@]}" --preset ffpa-large-d "${KSEL[@]}" --out "$W/ffpa-large-d"
    RC_FFPA=$RC
    step "torch ffpa-large-d" $((BUDGET * E2 / 100)) "${PY[@]}" --preset ffpa-large-d "${P[@]}" \
      --out "$W/torch-ffpa-large-d"
  fi
  if [ "$ONLY" != ffpa-large-d ] && [ "$ONLY" != ffpa-large-d-extra ]; then
    step "attnscope fa2-tokens16k" $((BUDGET * E3 / 100)) "${A[@]}" --preset fa2-tokens16k --metrics none --out "$W/fa2-tokens16k"
    RC_FA2=$RC
    step "torch fa2-tokens16k" $((BUDGET - 25)) "${PY[@]}" --preset fa2-tokens16k "${P[@]}" \
      --out "$W/torch-fa2-tokens16k"
  fi
  # Time left over finishes an attnscope run that its limit cut (--resume keeps its plan and protocol).
  R=(env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu "$BIN" run --quiet --resume)
  if cut "$RC_FFPA"; then step "attnscope ffpa-large-d, resumed" $((BUDGET - 25)) "${R[@]}" "$W/ffpa-large-d"; fi
  if cut "$RC_FA2"; then step "attnscope fa2-tokens16k, resumed" $((BUDGET - 25)) "${R[@]}" "$W/fa2-tokens16k"; fi
  rm -f "$W"/*/results.csv  # `attnscope merge` writes it again here
  for f in "$W"/*/results.jsonl; do
    [ -f "$f" ] && log "${f#"$W"/}: $(($(wc -l < "$f") - 1)) case lines"
  done
  log "total t=$(($(date +%s) - T0)) s"
  tar -czf "$OUT/examples.tar.gz" -C "$(dirname "$W")" examples
  cp "$L" "$OUT/device.log"
  ls -l "$OUT"
  tail -c 4000 "$L"
  exit 0
fi

[ "$MODE" = local ] || { echo "usage: $0 device .device/<you> | local <examples.tar.gz|folder> [attnscope]" >&2; exit 2; }
set -e
SRC=${2:?examples.tar.gz, or the folder holding it, or several archives joined by ':'}
B=${3:-build/attnscope}
[ -x "$B" ] || { echo "report_examples: no attnscope binary at $B (third argument)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# Several archives (one EXAMPLES_ONLY call per preset) unpack into one examples/ folder.
IFS=: read -r -a SRCS <<< "$SRC"
for S in "${SRCS[@]}"; do
  [ -d "$S" ] && S=$S/examples.tar.gz
  [ -f "$S" ] || { echo "report_examples: no archive at $S" >&2; exit 2; }
  mkdir -p "$T/unpack"
  tar -xzf "$S" -C "$T/unpack"
  tail -n 12 "$T/unpack/examples/device.log"
  mkdir -p "$T/examples"
  cat "$T/unpack/examples/device.log" >> "$T/examples/device.log"
  rm "$T/unpack/examples/device.log"
  cp -r "$T/unpack/examples/." "$T/examples/"
  rm -rf "$T/unpack"
done
D=$T/examples
E=docs/examples
# A preset whose attnscope or torch results did not come back is left as it is; the other one is
# made, then the script exits 1 (without the README).
MISSING=0
have() {
  for f in "$1" "torch-$1"; do
    if [ ! -s "$D/$f/results.jsonl" ]; then
      echo "report_examples: $SRC has no $f/results.jsonl (see its device.log); $E/$1 left as it is" >&2
      MISSING=1
      return 1
    fi
  done
}

F=$E/ffpa-large-d
if have ffpa-large-d; then
  rm -rf "$F"
  mkdir -p "$F"
  if [ -s "$D/ffpa-large-d-extra/results.jsonl" ]; then  # kernels run in a second call: one run
    "$B" merge "$D/ffpa-large-d/results.jsonl" "$D/ffpa-large-d-extra/results.jsonl" --out "$T/ffpa-joined" > /dev/null
    cp "$T/ffpa-joined/results.jsonl" "$F/results.jsonl"
  else
    cp "$D/ffpa-large-d/results.jsonl" "$F/results.jsonl"
  fi
  cp "$D/torch-ffpa-large-d/results.jsonl" "$F/torch.jsonl"
  "$B" report "$F/results.jsonl" "$F/torch.jsonl" --baseline torch.efficient -o "$F/report.md"
  # One run for the plots, from the files kept here: a speedup needs its baseline's case in the same
  # run. (Both have the default --metrics, so the protocols agree as merge requires.)
  "$B" merge "$F/results.jsonl" "$F/torch.jsonl" --out "$T/ffpa" > "$T/merge-ffpa.txt"
  tail -n 1 "$T/merge-ffpa.txt"
  # A kernel id in --kernels keeps all its variants (those the preset lists).
  "$B" plot "$T/ffpa" --x head_dim --y tflops \
    --kernels ffpa.wgmma.acc_f16,ffpa.wgmma.acc_f32,ffpa.l1.acc_f16,ffpa.l1.acc_f32,fa2.mma,cudnn.sdpa,cublas.unfused,torch.efficient,torch.math \
    -o "$F/"
  GPU=$(python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).readline()); g = (r.get("gpu") or {}).get("name"); print(g if g and r["backend"] != "cpu" else "CPU")' "$F/results.jsonl")
  GPU=${GPU// /_}
  GPU=${GPU//\//_}
  for k in ffpa.wgmma.acc_f16 ffpa.wgmma.acc_f32 ffpa.l1.acc_f16 ffpa.l1.acc_f32; do
    "$B" plot "$T/ffpa" --x head_dim --y speedup --baseline torch.efficient --kind bars --kernels $k \
      -o "$F/${GPU}_${k}_Speedup.png"
  done
fi

G=$E/fa2-tokens16k
if have fa2-tokens16k; then
  rm -rf "$G"
  mkdir -p "$G"
  cp "$D/fa2-tokens16k/results.jsonl" "$G/results.jsonl"
  cp "$D/torch-fa2-tokens16k/results.jsonl" "$G/torch.jsonl"
  "$B" report "$G/results.jsonl" "$G/torch.jsonl" -o "$G/report.md"
  # Two runs side by side (no kernel in both, so the labels are the kernel names); the FA2 paper's
  # D = 128 panels, without and with the causal mask. The report's figures hold every D and mask.
  "$B" plot "$G/results.jsonl" "$G/torch.jsonl" --x seq --y tflops --log-x --where head_dim=128 --where causal=0 \
    -o "$G/tflops_vs_s.png"
  "$B" plot "$G/results.jsonl" "$G/torch.jsonl" --x seq --y tflops --log-x --where head_dim=128 --where causal=1 \
    -o "$G/tflops_vs_s_causal.png"
  "$B" crossover "$G/results.jsonl" "$G/torch.jsonl" --a cudnn.sdpa --b torch.flash --axis seq --headroom 1.1 \
    -o "$G/crossover.toml" --plot "$G/crossover.png"
fi

[ "$MISSING" = 0 ] || exit 1
# The index, with the run's GPU and date from the attnscope run records.
run_of() { python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).readline()); print((r.get("gpu") or {}).get("name") or r["backend"], r["started_at"], r.get("git_commit", ""))' "$1"; }
list() { for f in "$1"/*.png; do if [ -f "$f" ]; then printf -- "  - \`%s\`\n" "${f##*/}"; fi; done; }
{
  echo "# Examples"
  echo
  echo "Generated by \`scripts/report_examples.sh\` (its header says how) from device calls on one GPU"
  echo "(one call for both presets, or one per preset with EXAMPLES_ONLY): both presets measured by"
  echo "attnscope and, through its torch.* Python adapters, by PyTorch's SDPA backends in the same call,"
  echo "with the same protocol"
  echo "(\`--max-time-s 0.3\`). The report, plot and crossover commands there read the JSONL files kept"
  echo "here. Runs (GPU, start, commit):"
  echo
  echo "- ffpa-large-d: $(run_of "$F/results.jsonl")"
  echo "- fa2-tokens16k: $(run_of "$G/results.jsonl")"
  echo
  echo "## ffpa-large-d: B=1 H=48 S=8192, D = 256..1024 step 64, fp16"
  echo
  echo "- \`results.jsonl\`: attnscope (ffpa.wgmma.acc_f16 and ffpa.wgmma.acc_f32 at their defaults,"
  echo "  ffpa.l1.acc_f16 and ffpa.l1.acc_f32 at their defaults and @q_resident=1, fa2.mma, cudnn.sdpa,"
  echo "  cublas.unfused); \`torch.jsonl\`: PyTorch"
  echo "  SDPA (torch.flash, torch.efficient, torch.cudnn, torch.math)."
  echo "- \`report.md\` and \`figures/\`: the full report, speedups against torch.efficient."
  echo "- Seed 000's figures, under its names: \`<GPU>.png\` TFLOPS vs D; \`<GPU>_<kernel>_Speedup.png\`"
  echo "  speedup of one FFPA kernel (each of its variants in the run) over torch.efficient per D (bars):"
  list "$F"
  echo
  echo "## fa2-tokens16k: B*S = 16384, H*D = 2048, D 64/128/256, S 512..16384, causal 0/1, fp16"
  echo
  echo "- \`results.jsonl\`: attnscope (fa2.mma, cudnn.sdpa, cublas.unfused; \`--metrics none\` to fit the"
  echo "  call); \`torch.jsonl\`: PyTorch SDPA, all four backends."
  echo "- \`report.md\` and \`figures/\`: the full report, speedups against cudnn.sdpa, TFLOPS vs S per D and mask."
  echo "- \`tflops_vs_s.png\`, \`tflops_vs_s_causal.png\`: TFLOPS vs S at D = 128, every kernel (the FA2"
  echo "  paper's panels); \`crossover.toml\`, \`crossover.png\`: from which S cudnn.sdpa beats torch.flash by 1.1x."
} > $E/README.md
du -sh "$F" "$G"
