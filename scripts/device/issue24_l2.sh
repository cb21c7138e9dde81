#!/usr/bin/env bash
# Issue 24 in one device call: the measured L2 ceiling (peaks) and the L2 traffic metric (GPU
# tests), a report whose roofline draws them, and the 60-case sweep of item 9 three times.
set -uo pipefail
OUT=${OUT:-/tmp/out}
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu ATTNSCOPE_PRESETS=$PWD/assets/presets
export ATTNSCOPE_BIN=$PWD/dev-carry/new/attnscope
B=dev-carry/new/attnscope
date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
$B peaks --remeasure 2>&1 | tail -8
timeout 200 dev-carry/new/attnscope.tests.gpu --gtest_filter='MetricsGpu.*:EngineStages.*' > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure" -A3 $OUT/gpu_tests.log | head -20
$B run --kernels fa2.mma,cudnn.sdpa,cublas.unfused --batch 2 --heads 16 --seq 2048,8192 --head-dim 64,128 \
  --max-time-s 0.2 --quiet --report --out $OUT/roof --force > $OUT/roof.log 2>&1; echo "roofline run rc=$?"
ls $OUT/roof/figures | head
head -1 $OUT/roof/results.jsonl | python3 -c "import json,sys; print('peaks:', json.load(sys.stdin)['peaks'])"
tail -2 $OUT/roof/results.jsonl | python3 -c "
import json,sys
for l in sys.stdin:
    m = json.loads(l).get('metrics', {}); print('l2_bytes', m.get('l2_bytes'), 'dram_bytes', m.get('dram_bytes'))"
for i in 1 2 3; do
  T0=$(date +%s)
  $B run --kernels fa2.mma,cudnn.sdpa,cublas.unfused --batch 2 --heads 16 --seq 1024:16384:x2 --head-dim 64,128 \
    --causal 0,1 --quiet --out $OUT/item9_$i --force > $OUT/item9_$i.log 2>&1
  echo "item 9 run $i: rc=$? $(( $(date +%s) - T0 )) s; $(grep -E '^60 cases' $OUT/item9_$i.log)"
done
rm -rf $OUT/*/results.csv $OUT/*/plan.jsonl $OUT/*/workers.log $OUT/item9_*/results.jsonl
