#!/usr/bin/env bash
# One device call: the registry-driven conformance suite (tests/gpu/test_conformance.cpp) over every
# registered CUDA kernel and each of its knob values, then a kernel x pass/skip/fail table. Binaries in $1 (a CUDA build, e.g.
# the build folder carried to the device); log under $OUT. Exit status: the suite's.
#   scripts/device/conformance.sh build        # or .device/<name> with attnscope.tests.gpu in it
set -uo pipefail
BIN=${1:-build}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export ATTNSCOPE_BIN=$PWD/$BIN/attnscope ATTNSCOPE_PRESETS=$PWD/assets/presets
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
TESTS=$BIN/attnscope.tests.gpu
[[ -x $TESTS ]] || TESTS=$BIN/tests/attnscope.tests.gpu  # a CMake build folder
T0=$(date +%s)
timeout "${SUITE_S:-540}" "$TESTS" --gtest_filter='Registry/Conformance.*:ConformanceRegistry.*' \
  > "$OUT/conformance.log" 2>&1
rc=$?
echo "conformance rc=$rc t=$(( $(date +%s) - T0 ))s (log: $OUT/conformance.log)"
printf '%-36s %6s %6s %6s\n' 'kernel (@ knob variant)' pass skip fail
sed -n 's/^\[conformance\] \([^:]*\): \([0-9]*\) pass, \([0-9]*\) skip, \([0-9]*\) fail$/\1 \2 \3 \4/p' "$OUT/conformance.log" |
  awk '{printf "%-36s %6d %6d %6d\n", $1, $2, $3, $4; p += $2; s += $3; f += $4}
       END {printf "%-36s %6d %6d %6d\n", "total", p, s, f}'
# Each failing case, with its reason (the engine's check verdict or the error).
grep -E "^[a-z0-9_.@=+]+ [a-z0-9_]+ \(.*\): (mismatch|error|fault|oom|timeout):" "$OUT/conformance.log" | head -40
grep -E "^\[  (SKIPPED|FAILED) \]" "$OUT/conformance.log" | sort -u | head -20
exit $rc
