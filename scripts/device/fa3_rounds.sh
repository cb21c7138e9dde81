#!/usr/bin/env bash
# fa3.wgmma versions A/B'd over interleaved rounds in one device call: each binary folder given (its
# attnscope) runs the fa2-tokens16k cases once a round, in the order given, for $ROUNDS rounds (2), with
# cudnn.sdpa first in every run as the same-run reference and a cool-down before each case so that no
# run inherits the clock state of the one before. Prints fa3.wgmma TFLOPS per case and binary, one
# figure a round, and cudnn.sdpa's range over the call (scripts/device/rounds_table.py).
# Usage: scripts/device/fa3_rounds.sh BIN_DIR... (the folder's name labels its column)
# Env: ROUNDS_SEQ (2048,8192), ROUNDS_D (64,128,256), ROUNDS_CAUSAL (0,1), ROUNDS_DTYPE (fp16),
# ROUNDS_KERNEL (fa3.wgmma; a comma list of variants, e.g. "fa3.wgmma,fa3.wgmma@epilogue=1", runs each
# beside cudnn.sdpa in every run, a column each), ROUNDS_MAX_TIME_S (0.2), ROUNDS_COOL_MS (300), OUT (/tmp/out).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export ATTNSCOPE_PRESETS=$PWD/assets/presets LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
dirs=()
for round in $(seq 1 "${ROUNDS:-2}"); do
  for bin in "$@"; do
    name=$(basename "$bin")
    out="$OUT/rounds_${name}_$round"
    timeout 150 "$bin/attnscope" run --quiet --preset fa2-tokens16k --seq "${ROUNDS_SEQ:-2048,8192}" \
      --head-dim "${ROUNDS_D:-64,128,256}" --causal "${ROUNDS_CAUSAL:-0,1}" --dtype "${ROUNDS_DTYPE:-fp16}" \
      --kernels "cudnn.sdpa,${ROUNDS_KERNEL:-fa3.wgmma}" --no-check --metrics none \
      --max-time-s "${ROUNDS_MAX_TIME_S:-0.2}" --cooldown-ms "${ROUNDS_COOL_MS:-300}" \
      --out "$out" --force > "$out.log" 2>&1 || echo "$name round $round rc=$?"
    dirs+=("$out")
  done
done
python3 "$(dirname "$0")/rounds_table.py" --kernel "${ROUNDS_KERNEL:-fa3.wgmma}" "${dirs[@]}"
