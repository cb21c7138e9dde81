#!/usr/bin/env bash
# One device call: the whole GPU test binary (every `gpu` test), then its summary, the conformance
# table and any failure. Binaries in $1 (attnscope, tests/attnscope.tests.gpu).
#   scripts/device/gpu_suite.sh dev-carry/new
set -uo pipefail
source "$(dirname "$0")/common.sh"
export ATTNSCOPE_CUDA_EXAMPLE_PLUGIN=$PWD/$BIN/examples/libattnscope_example_cuda.so ATTNSCOPE_TEST_PLUGIN_DIR=$PWD/$BIN/tests
T0=$(date +%s)
timeout "${SUITE_S:-480}" "$BIN/tests/attnscope.tests.gpu" ${FILTER:+--gtest_filter=$FILTER} > "$OUT/gpu.log" 2>&1
echo "gpu suite rc=$? t=$(( $(date +%s) - T0 ))s"
grep -E "^\[==========\]|^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]" "$OUT/gpu.log" | sort | uniq -c | sort -rn | head -40
grep -E "^\[conformance\]" "$OUT/gpu.log"
grep -E "Failure|: (mismatch|error|fault|oom|timeout):" -A3 "$OUT/gpu.log" | head -60
