#!/usr/bin/env bash
# One device call: the whole GPU test binary (every `gpu` test), then its summary, the conformance
# table and any failure. Binaries in $1 (attnscope, tests/attnscope.tests.gpu). The whole binary
# (1167 tests) no longer fits one 600 s call: SHARDS=2 SHARD=0, then SHARD=1, runs it in halves
# (googletest's own sharding, every test in exactly one shard).
#   SHARDS=2 SHARD=0 scripts/device/gpu_suite.sh dev-carry/new
set -uo pipefail
source "$(dirname "$0")/common.sh"
export ATTNSCOPE_CUDA_EXAMPLE_PLUGIN=$PWD/$BIN/examples/libattnscope_example_cuda.so ATTNSCOPE_TEST_PLUGIN_DIR=$PWD/$BIN/tests
export GTEST_TOTAL_SHARDS=${SHARDS:-1} GTEST_SHARD_INDEX=${SHARD:-0}
T0=$(date +%s)
timeout "${SUITE_S:-480}" "$BIN/tests/attnscope.tests.gpu" ${FILTER:+--gtest_filter=$FILTER} > "$OUT/gpu.log" 2>&1
echo "gpu suite rc=$? t=$(( $(date +%s) - T0 ))s"
grep -E "^\[==========\]|^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]" "$OUT/gpu.log" | sort | uniq -c | sort -rn | head -40
grep -E "^\[conformance\]" "$OUT/gpu.log"
grep -E "Failure|: (mismatch|error|fault|oom|timeout):" -A3 "$OUT/gpu.log" | head -60
