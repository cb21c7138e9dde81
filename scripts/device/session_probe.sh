#!/usr/bin/env bash
# Issue 22/21 probe in one device call: the 60-case sweep's phases with --metrics none (twice; the
# first run of a machine is cold), cuda.reference alone on the sweep's 20 problems (kernel time per
# problem), and Nsight Compute's per-instruction stall samples of fa3.wgmma at 2x16x8192x128 fp16.
# Usage: scripts/device/session_probe.sh BIN   (BIN holds attnscope and tests/attnscope.tests.gpu)
set -uo pipefail
source "$(dirname "$0")/common.sh" "${1:-build}"
if [[ ${PROBE_SWEEP:-1} == 1 ]]; then
  BIN=$BIN OUT=$OUT RUNS="${PROBE_RUNS:-cold:--metrics,none,--devices,0 warm:--metrics,none,--devices,0}" \
    bash "$(dirname "$0")/sweep_phases.sh"
fi
if [[ ${PROBE_REFERENCE:-1} == 1 ]]; then
  timeout 200 "$BIN/attnscope" run --quiet --kernels cuda.reference --dtype fp32 --batch 2 --heads 16 \
    --seq 1024:16384:x2 --head-dim 64,128 --causal 0,1 --no-check --metrics none --max-time-s 0.2 \
    --min-samples 3 --out "$OUT/reference" --force > "$OUT/reference.log" 2>&1
  echo "reference rc=$?"
  python3 - "$OUT/reference/results.jsonl" <<'PY'
import json, sys
total = 0.0
for line in list(open(sys.argv[1]))[1:]:
    r = json.loads(line); p = r["problem"]
    ms = (r.get("timing") or {}).get("median_ms", 0); total += ms
    print(f'  {p["seq_q"]:6d} D{p["head_dim"]:4d} causal={int(p.get("causal", False))} {ms:9.2f} ms {r.get("tflops", 0):6.2f} TFLOPS {r["status"]}')
print(f"  cuda.reference total {total:.1f} ms")
PY
fi
if [[ ${PROBE_NCU:-1} == 1 ]]; then
  timeout 240 ncu --clock-control none --cache-control none --section SourceCounters --section WarpStateStats \
    --section ComputeWorkloadAnalysis --import-source no -k regex:fa3 --launch-skip 1 --launch-count 1 \
    -o "$OUT/fa3" -f "$BIN/attnscope" run --in-process --kernels fa3.wgmma --batch 2 --heads 16 --seq 8192 \
    --head-dim 128 --dtype fp16 --causal "${PROBE_CAUSAL:-0}" --no-check --metrics none --warmup-ms 0 \
    --min-samples 2 --max-samples 2 --out /tmp/ncu_fa3 --force > "$OUT/ncu_fa3.log" 2>&1
  echo "ncu rc=$?"; tail -3 "$OUT/ncu_fa3.log"
  ncu --import "$OUT/fa3.ncu-rep" --page source --csv --print-source sass > "$OUT/fa3_source.csv" 2>&1
  echo "source rc=$? lines=$(wc -l < "$OUT/fa3_source.csv")"
  ncu --import "$OUT/fa3.ncu-rep" --page details > "$OUT/fa3_details.txt" 2>&1
  grep -iE "stall|warp cycles|issued|tensor|duration" "$OUT/fa3_details.txt" | head -30
fi
