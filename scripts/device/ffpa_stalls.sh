#!/usr/bin/env bash
# Where ffpa.wgmma's warps wait, per SASS instruction (ncu's stall sampling), for its forms at large D:
# one launch each of the cases in $STALL_CASES ("kernel D;..."; B 1, H 16, S 8192, fp16, full mask).
# Writes $OUT/stalls_<n>.csv.xz (per instruction: samples by stall reason) and prints, per case, the
# samples by stall reason and by opcode and the instructions with the most (ffpa_stalls_table.py).
# Usage: scripts/device/ffpa_stalls.sh BIN   (BIN holds attnscope)
set -uo pipefail
source "$(dirname "$0")/common.sh" "${1:-build}"
IFS=';' read -ra cases <<< "${STALL_CASES:-ffpa.wgmma.acc_f16@split_d=2 1024;ffpa.wgmma.acc_f16@split_d=1 1024;ffpa.wgmma.acc_f16 512}"
n=0
for c in "${cases[@]}"; do
  read -r kern D <<< "$c"
  n=$((n + 1))
  timeout 200 ncu --clock-control none --cache-control none --section SourceCounters --section WarpStateStats \
    --import-source no -k regex:ffpa_wgmma --launch-skip 1 --launch-count 1 -o "$OUT/stalls_$n" -f \
    "$BIN/attnscope" run --in-process --kernels "$kern" --batch 1 --heads 16 --seq 8192 --head-dim "$D" \
    --dtype fp16 --causal 0 --no-check --metrics none --warmup-ms 0 --min-samples 2 --max-samples 2 \
    --out "/tmp/stalls_run_$n" --force > "$OUT/stalls_$n.log" 2>&1
  echo "== $kern D=$D ncu rc=$?"
  ncu --import "$OUT/stalls_$n.ncu-rep" --page details > "$OUT/stalls_${n}_details.txt" 2>&1
  grep -E "Duration|Warp Cycles Per Issued|Issued Warp|No Eligible|Active Warps Per" "$OUT/stalls_${n}_details.txt" | head -8
  ncu --import "$OUT/stalls_$n.ncu-rep" --page source --csv --print-source sass > "$OUT/stalls_$n.csv" 2>&1
  xz -9 "$OUT/stalls_$n.csv"; rm -f "$OUT/stalls_$n.ncu-rep"
  python3 "$(dirname "$0")/ffpa_stalls_table.py" "$OUT/stalls_$n.csv.xz"
done
