#!/usr/bin/env bash
# ncu source-level (SASS) stall sampling of fa2.mma's backward key-block kernel: fp16, B 2, H 2048/D,
# S 8192 (BWD_D, default 128; BWD_CAUSAL 0). Writes $OUT/bwd_source.csv.xz (per SASS instruction:
# samples by stall reason) and prints the warp-state summary.
#   scripts/device/bwd_source.sh dev-carry/new
set -uo pipefail
source "$(dirname "$0")/common.sh"
D=${BWD_D:-128}; H=$((2048 / D))
timeout 240 ncu --section SourceCounters --section WarpStateStats --import-source no -k regex:key_block \
  --launch-count 1 -o "$OUT/bwd" -f "$ATTNSCOPE_BIN" run --in-process --kernels fa2.mma --batch 2 --heads $H \
  --seq 8192 --head-dim $D --causal "${BWD_CAUSAL:-0}" --pass bwd --metrics none --warmup-ms 0 \
  --max-time-s 0.01 --out /tmp/ncu_bwd --force > "$OUT/ncu_bwd.log" 2>&1
echo "ncu rc=$?"
ncu --import "$OUT/bwd.ncu-rep" --page source --csv --print-source sass > "$OUT/bwd_source.csv" 2>&1
echo "source rc=$? lines=$(wc -l < "$OUT/bwd_source.csv")"; xz -9 "$OUT/bwd_source.csv"; rm -f "$OUT/bwd.ncu-rep"
