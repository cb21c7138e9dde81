# Sourced by the device scripts: $BIN (binaries: attnscope, tests/attnscope.tests.gpu), $OUT, the
# environment attnscope and its tests read on the device, and the device's name and clocks first.
BIN=${1:-build}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export ATTNSCOPE_BIN=$PWD/$BIN/attnscope ATTNSCOPE_PRESETS=$PWD/assets/presets
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
