#!/usr/bin/env bash
# Issues 22 and 25 in one device call on a 2-GPU host: the engine's GPU tests and the conformance
# suite of this build, then the 60-case sweep with --metrics none and with the default metrics on
# one GPU and on both, and Nsight Compute beside three metrics passes. Binaries in dev-carry/new.
set -uo pipefail
OUT=${OUT:-/tmp/out}
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu ATTNSCOPE_PRESETS=$PWD/assets/presets
export ATTNSCOPE_BIN=$PWD/dev-carry/new/attnscope
if [[ -z ${SKIP_TESTS:-} ]]; then
  timeout 240 dev-carry/new/attnscope.tests.gpu --gtest_filter='EngineStages.*:MetricsGpu.*:TransferOrder.*:EngineGpu.*' \
    > $OUT/gpu_tests.log 2>&1
  echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" $OUT/gpu_tests.log | head
  SUITE_S=200 bash scripts/device/conformance.sh dev-carry/new 2>&1 | grep -E "conformance rc|^total"
fi
RUNS=${RUNS:-"none0:--metrics,none,--devices,0 none_all:--metrics,none,--devices,all auto0:--devices,0 auto_all:--devices,all"} \
  NCU_FROM=${NCU_FROM:-auto0} NCU_CASES=${NCU_CASES-"cublas.unfused:16384:128:0 fa2.mma:16384:128:0 cudnn.sdpa:4096:64:1"} \
  BIN=dev-carry/new bash scripts/device/sweep_phases.sh 2>&1 | grep -v "metrics pass cudnn\|metrics pass fa2"
# The metrics pass as before issue 22 (CUPTI kernel replay for every case), last and bounded.
if [[ -n ${KERNEL_REPLAY_S:-} ]]; then
  RUNS="kern0:--metrics-replay,kernel,--devices,0" NCU_CASES="" BIN=dev-carry/new \
    timeout "$KERNEL_REPLAY_S" bash scripts/device/sweep_phases.sh 2>&1 | grep -v "metrics pass cudnn\|metrics pass fa2"
fi
rm -rf $OUT/*/results.csv $OUT/*/plan.jsonl $OUT/*/workers.log $OUT/ref
