#!/usr/bin/env bash
# One device call: GPU tests, the quick preset, the cuDNN anchor case with PyTorch's figure in the
# same run, and the ncu cross-check of attnscope's median. Expects the binaries in $1 (default
# .device/lead) and writes logs under $OUT.
set -uo pipefail
BIN=${1:-.device/lead}
OUT=${OUT:-/tmp/out}
export ATTNSCOPE_BIN=$PWD/$BIN/attnscope ATTNSCOPE_PRESETS=$PWD/assets/presets
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
$ATTNSCOPE_BIN devices
echo "== GPU tests"; $BIN/attnscope.tests.gpu 2>&1 > $OUT/gpu_tests.log; echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED)|FAILED  \]|tests ran" $OUT/gpu_tests.log | tail -30
echo "== quick preset"; $ATTNSCOPE_BIN run --preset quick --out $OUT/quick --force > $OUT/quick.log 2>&1; echo "quick rc=$?"; tail -40 $OUT/quick.log
echo "== anchor case"
$ATTNSCOPE_BIN run --kernels cudnn.sdpa,cublas.unfused,naive.unfused --baseline cudnn.sdpa --batch 2 --heads 16 --seq 8192 --head-dim 128 --dtype fp16 --out $OUT/anchor --force 2>&1 | tail -12
python3 scripts/device/torch_sdpa_case.py 2 16 8192 128 fp16 0 2>&1 | tail -3
echo "== ncu cross-check (cudnn.sdpa 2x16x8192x128 fp16, 10 samples, L2 cold)"
$ATTNSCOPE_BIN run --kernels cudnn.sdpa --batch 2 --heads 16 --seq 8192 --head-dim 128 --dtype fp16 --no-check --warmup-ms 0 --min-samples 10 --max-samples 10 --out $OUT/ncu_twin --force 2>&1 | grep -E "cudnn.sdpa" | tail -2
ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv --page raw \
  $ATTNSCOPE_BIN run --kernels cudnn.sdpa --batch 2 --heads 16 --seq 8192 --head-dim 128 --dtype fp16 --no-check --warmup-ms 0 --min-samples 10 --max-samples 10 --out $OUT/ncu_run --force > $OUT/ncu.csv 2> $OUT/ncu.err
echo "ncu rc=$?"; tail -3 $OUT/ncu.err
python3 - "$OUT" <<'PY'
import csv, json, sys, statistics
out = sys.argv[1]
rows = [r for r in csv.reader(open(f"{out}/ncu.csv")) if r]
hdr = next(i for i, r in enumerate(rows) if "gpu__time_duration.sum" in r)
col = rows[hdr].index("gpu__time_duration.sum"); name = rows[hdr].index("Kernel Name")
unit = rows[hdr + 1][col]
vals = [(r[name], float(r[col].replace(",", ""))) for r in rows[hdr + 2:]]
scale = {"ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "nsecond": 1e-6}.get(unit, 1e-6)
ms = [v * scale for _, v in vals]
print(f"ncu: {len(ms)} launches ({vals[0][0][:60]}...), unit {unit}; median {statistics.median(ms):.4f} ms")
for f in ("ncu_twin", "ncu_run"):
    recs = [json.loads(l) for l in open(f"{out}/{f}/results.jsonl")][1:]
    t = recs[0]["timing"]
    print(f"attnscope {f}: median {t['median_ms']:.4f} ms over {t['samples']} samples (noise {t['noise_pct']:.2f}%)")
PY
