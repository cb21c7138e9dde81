#!/usr/bin/env bash
# fa2.mma's backward above D 128, new/old/new: tokens16k shapes with H = 2048 / D rounded down
# (anchors.py's choice, so D 160 and 192 are comparable with PyTorch's), S 2048 and 8192, causal
# 0 and 1, fp16, warm L2, --metrics none. Prints TFLOPS per case and run.
#   scripts/device/bwd_wide_ab.sh dev-carry/new dev-carry/old   (BWD_D: "160 192 256")
set -uo pipefail
NEW=${1:?new binary folder}
OLD=${2:?old binary folder}
OUT=${OUT:-/tmp/out}
export ATTNSCOPE_PRESETS=$PWD/assets/presets LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for d in ${BWD_D:-160 192 256}; do
  for s in 2048 8192; do
    n=0
    for b in "$NEW" "$OLD" "$NEW"; do
      n=$((n + 1))
      timeout 120 "$b/attnscope" run --quiet --kernels fa2.mma --batch $((16384 / s)) --heads $((2048 / d)) \
        --seq $s --head-dim $d --causal 0,1 --pass bwd --l2 warm --metrics none --max-time-s 0.3 \
        --out /tmp/wab_$n --force > /dev/null 2>&1
      python3 - /tmp/wab_$n/results.jsonl "$d $s run$n" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "kernel" in r:
        print(sys.argv[2], "causal", int(r["problem"].get("causal", False)), f'{r.get("tflops", 0):.1f}', r["status"])
PY
    done
  done
done
