#!/usr/bin/env bash
# Issue 24 item 9 in one device call: the 60-case sweep that reported "cuda.reference disagrees
# with cpu.reference" once with the binary before the fix ($OLD), then three times with the fixed
# binary ($NEW), plus the fixed build's TransferOrder GPU tests. Logs under $OUT.
set -uo pipefail
OLD=${OLD:-dev-carry/old}
NEW=${NEW:-dev-carry/new}
OUT=${OUT:-/tmp/out}
export ATTNSCOPE_PRESETS=$PWD/assets/presets
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
SWEEP="--kernels fa2.mma,cudnn.sdpa,cublas.unfused --batch 2 --heads 16 --seq 1024:16384:x2 --head-dim 64,128 --causal 0,1"
summarise() {  # $1: results dir
  python3 - "$1" <<'PY'
import json, sys, collections
recs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")][1:]
st = collections.Counter(r["status"] for r in recs)
print(f"  {len(recs)} cases: {dict(st)}")
for r in recs:
    if r["status"] != "ok":
        p = r["problem"]
        print(f"  {r['status']}: {r['kernel']} {p['batch']}x{p['heads_q']}x{p['seq_q']}x{p['head_dim']} causal={p['causal']}: {r.get('reason','')[:160]}")
PY
}
for run in ${RUNS:-old new1 new2 new3}; do
  BIN=$NEW; [[ $run == old* ]] && BIN=$OLD
  T0=$(date +%s)
  $BIN/attnscope run $SWEEP ${EXTRA:-} --quiet --out $OUT/$run --force > $OUT/$run.log 2>&1
  echo "== $run ($BIN): rc=$? t=$(( $(date +%s) - T0 ))s"; summarise $OUT/$run
done
if [[ -x $NEW/attnscope.tests.gpu && -z ${SKIP_TESTS:-} ]]; then
  ATTNSCOPE_BIN=$PWD/$NEW/attnscope $NEW/attnscope.tests.gpu --gtest_filter='TransferOrder.*' > $OUT/transfer_tests.log 2>&1
  echo "== TransferOrder tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED|  OK) |FAILED" $OUT/transfer_tests.log | tail -8
fi
