#!/usr/bin/env bash
# Issue 22: cudnn.sdpa's graph and plan built once per problem (the check's error bar and the
# cudnn.sdpa case share it), then built on a host thread while the GPU computes the reference. The
# 60-case sweep with --metrics none, binaries alternated: dev-carry/new/old/attnscope (before),
# dev-carry/new/mid/attnscope (shared plan; when present), dev-carry/new/attnscope (after); then the
# cuDNN and engine GPU tests of the last build.
set -uo pipefail
OUT=${OUT:-/tmp/out}
for round in 1 2; do
  for which in old mid new; do
    BIN=dev-carry/new; [[ $which != new ]] && BIN=dev-carry/new/$which
    [[ -x $BIN/attnscope ]] || continue
    RUNS="${which}${round}:--metrics,none,--devices,0" NCU_CASES="" BIN=$BIN OUT=$OUT \
      bash scripts/device/sweep_phases.sh 2>&1 | grep -E "^== |^time:|cudnn.sdpa |fa2.mma  |cublas|statuses"
  done
done
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu ATTNSCOPE_PRESETS=$PWD/assets/presets ATTNSCOPE_BIN=$PWD/dev-carry/new/attnscope
timeout 300 dev-carry/new/attnscope.tests.gpu --gtest_filter='CudnnSdpa*:EngineStages.*:EngineGpu.*:IsolationGpu.*:MetricsGpu.*' > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure" $OUT/gpu_tests.log | head
rm -rf $OUT/*/results.csv $OUT/*/plan.jsonl $OUT/*/workers.log
