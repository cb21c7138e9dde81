# Sourced by the device scripts: $BIN (binaries: attnscope, tests/attnscope.tests.gpu), $OUT, the
# environment attnscope and its tests read on the device, and the device's name and clocks first.
BIN=${1:-build}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export ATTNSCOPE_BIN=$PWD/$BIN/attnscope ATTNSCOPE_PRESETS=$PWD/assets/presets
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader

# run_conformance FILTER [SECONDS]: the GPU binary's tests matching FILTER (log: $OUT/conformance.log),
# then the per-kernel conformance lines, each failing case and the skipped or failed tests.
run_conformance() {
  local t0
  t0=$(date +%s)
  timeout "${2:-300}" "$BIN/tests/attnscope.tests.gpu" --gtest_filter="$1" > "$OUT/conformance.log" 2>&1
  echo "conformance rc=$? t=$(( $(date +%s) - t0 ))s"
  grep -E "^\[conformance\]" "$OUT/conformance.log"
  grep -E "^[a-z0-9_.@=+]+ [a-z0-9_+]+ \(.*\): (mismatch|error|fault|oom|timeout):" "$OUT/conformance.log" |
    cut -c1-300 | head -30
  grep -E "^\[  (SKIPPED|FAILED) \]|Failure" "$OUT/conformance.log" | sort -u | head -20
}
