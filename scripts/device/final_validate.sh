#!/usr/bin/env bash
# One device call: the whole GPU test suite, then the CUPTI-vs-ncu cross-check (validate_metrics.py).
# Binaries in $1 (built for sm_90a); logs under $OUT.
set -uo pipefail
BIN=${1:-.device/final}
OUT=${OUT:-/tmp/out}
export ATTNSCOPE_BIN=$PWD/$BIN/attnscope ATTNSCOPE_PRESETS=$PWD/assets/presets
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
timeout ${SUITE_S:-450} $BIN/attnscope.tests.gpu > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$? t=$(( $(date +%s) - T0 ))s"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests? from .* ran|^\[==========\]" $OUT/gpu_tests.log | tail -25
timeout 170 python3 tests/gpu/validate_metrics.py cudnn.sdpa,cublas.unfused,fa2.mma --budget-s 150 > $OUT/validate_metrics.md 2>&1
echo "validate rc=$? t=$(( $(date +%s) - T0 ))s"; grep -E "^\| [AB] \||within|peaks|fp16|bf16|DRAM" $OUT/validate_metrics.md | head -30
