#!/usr/bin/env bash
# cuda.reference before and after (two rows per thread) in one call: its timing at the 60-case
# sweep's largest shapes, the engine's GPU tests and the conformance suite on the new build, then
# the 60-case sweep with --metrics none on both builds (phases). OLD=dev-carry/old, NEW=dev-carry/new.
set -uo pipefail
OUT=${OUT:-/tmp/out}
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu ATTNSCOPE_PRESETS=$PWD/assets/presets
export ATTNSCOPE_BIN=$PWD/dev-carry/new/attnscope
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for b in old new; do
  dev-carry/$b/attnscope run --kernels cuda.reference --dtype fp32 --batch 2 --heads 16 --seq 4096,16384 \
    --head-dim 64,128 --causal 0,1 --no-check --metrics none --max-time-s 0.3 --out $OUT/ref_$b --force 2>&1 |
    grep -E "^cuda.reference" | sed "s/^/$b /"
done
timeout 200 dev-carry/new/attnscope.tests.gpu --gtest_filter='EngineStages.*:EngineGpu.*' > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" $OUT/gpu_tests.log | head
SUITE_S=200 bash scripts/device/conformance.sh dev-carry/new 2>&1 | grep -E "conformance rc|^total|cuda.reference"
SWEEP="--kernels fa2.mma,cudnn.sdpa,cublas.unfused --batch 2 --heads 16 --seq 1024:16384:x2 --head-dim 64,128 --causal 0,1"
for b in old new old new; do
  dev-carry/$b/attnscope run $SWEEP --metrics none --quiet --out $OUT/sweep_$b --force > $OUT/sweep_$b.log 2>&1
  echo "$b rc=$? $(grep -E '^60 cases|^time:' $OUT/sweep_$b.log | tr '\n' ' ')"
done
rm -rf $OUT/*/results.csv $OUT/*/plan.jsonl $OUT/*/workers.log $OUT/*/results.jsonl
