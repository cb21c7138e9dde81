#!/usr/bin/env bash
# docs/examples/ from one H100 device call: the ffpa-large-d and fa2-tokens16k presets measured by
# attnscope and by tools/torch_sdpa.py (PyTorch SDPA baselines, same protocol), then reports,
# the seed-000 figures, TFLOPS vs S and a crossover, generated here from what came back.
#   device:  scripts/report_examples.sh device .device/<you>     (run through the device tool with
#            carry [".device/<you>"]; writes $OUT; about 5 minutes)
#   here:    scripts/report_examples.sh local <files_at> [build/attnscope]
set -uo pipefail
MODE=${1:?device|local}
if [ "$MODE" = device ]; then
  BIN=$PWD/${2:?.device/<you>}/attnscope
  OUT=${OUT:-/tmp/out}
  L=$OUT/device.log
  P="--max-time-s 0.3"  # the same protocol flags for attnscope and torch, so `attnscope merge` joins them
  export ATTNSCOPE_PRESETS=$PWD/assets/presets
  T0=$(date +%s)
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader; } > "$L" 2>&1
  # attnscope needs the system cuDNN 9.14; PyTorch its bundled cuDNN: LD_LIBRARY_PATH only for attnscope.
  for preset in ffpa-large-d fa2-tokens16k; do
    echo "== attnscope $preset" >> "$L"
    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu timeout 200 "$BIN" run --preset $preset $P --out "$OUT/${preset%%-*}" --quiet >> "$L" 2>&1
    echo "rc=$? t=$(( $(date +%s) - T0 ))s" >> "$L"
  done
  for preset in fa2-tokens16k ffpa-large-d; do
    echo "== torch $preset" >> "$L"
    timeout 100 python3 tools/torch_sdpa.py --preset $preset $P --out "$OUT/torch_${preset%%-*}" >> "$L" 2>&1
    echo "rc=$? t=$(( $(date +%s) - T0 ))s" >> "$L"
  done
  # The report's ncu command: does the NVTX filter keep the case's kernels?
  A="run --backend cuda --kernels cudnn.sdpa --batch 1 --heads 16 --seq 2048 --head-dim 128 --dtype fp16 --causal 0 --no-check --warmup-ms 0 --min-samples 1 --max-samples 1 --l2 warm --seed 42 --force"
  for filter in "--nvtx --nvtx-include regex:attnscope@.*/" ""; do
    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu timeout 60 ncu --metrics gpu__time_duration.sum $filter "$BIN" $A --out /tmp/ncu > /tmp/ncu.txt 2>&1
    echo "ncu [${filter:-no filter}] rc=$? profiled=$(grep -c gpu__time_duration /tmp/ncu.txt)" >> "$L"
    grep -E "==ERROR|==WARNING" /tmp/ncu.txt | head -3 >> "$L"
  done
  rm -f "$OUT"/*/results.csv "$OUT"/*/plan.jsonl
  tail -c 2500 "$L"
  exit 0
fi

D=${2:?files_at}
B=${3:-build/attnscope}
E=docs/examples
mkdir -p $E/ffpa-large-d $E/fa2-tokens16k
cp "$D/ffpa/results.jsonl" $E/ffpa-large-d/results.jsonl
cp "$D/torch_ffpa/results.jsonl" $E/ffpa-large-d/torch.jsonl
cp "$D/fa2/results.jsonl" $E/fa2-tokens16k/results.jsonl
cp "$D/torch_fa2/results.jsonl" $E/fa2-tokens16k/torch.jsonl
# Full reports with their figures (figures/ beside each report.md).
$B report $E/ffpa-large-d/results.jsonl $E/ffpa-large-d/torch.jsonl --baseline torch.efficient -o $E/ffpa-large-d/report.md
$B report $E/fa2-tokens16k/results.jsonl $E/fa2-tokens16k/torch.jsonl -o $E/fa2-tokens16k/report.md
# Seed 000's figures (TFLOPS vs D; speedup bars vs the memory-efficient baseline) and TFLOPS vs S.
T=$(mktemp -d)
$B merge $E/ffpa-large-d/results.jsonl $E/ffpa-large-d/torch.jsonl --out $T/ffpa
$B merge $E/fa2-tokens16k/results.jsonl $E/fa2-tokens16k/torch.jsonl --out $T/fa2
$B plot $T/ffpa --x head_dim --y tflops -o $E/ffpa-large-d/seed000_tflops_vs_d.png
$B plot $T/ffpa --x head_dim --y speedup --baseline torch.efficient --kind bars -o $E/ffpa-large-d/seed000_speedup_vs_efficient.png
$B plot $T/fa2 --x seq --y tflops --log-x -o $E/fa2-tokens16k/tflops_vs_s.png
$B crossover $E/fa2-tokens16k/results.jsonl $E/fa2-tokens16k/torch.jsonl --a cudnn.sdpa --b torch.flash --axis seq \
  --headroom 1.1 -o $E/fa2-tokens16k/crossover.toml --plot $E/fa2-tokens16k/crossover.png
rm -rf "$T"
du -sh $E
