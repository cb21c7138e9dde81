#!/usr/bin/env bash
# fa2.mma backward: the base binary's conformance, then each variant folder's (where it has its own
# tests binary) and the variant against the base, variant/base/variant, at every D in VARIANT_D
# (bwd_wide_ab.sh: tokens16k with H = 2048 / D rounded down, S 2048 and 8192, causal 0 and 1, fp16,
# warm L2). One line a case and run. (The 22:05 call of docs/PERF.md ran these with --no-check.)
#   scripts/device/bwd_variants.sh dev-carry/main dev-carry/prefetch dev-carry/dq-order
set -uo pipefail
BASE=${1:?base binary folder}
shift
HERE=$(dirname "$0")
source "$HERE/common.sh" "$BASE"
FILTER=${FILTER:-Registry/BackwardConformance.*fa2_mma:Fa2MmaSpec.*:Varlen*}
run_conformance "$FILTER" 200 | tail -12
for v in "$@"; do
  if [[ -x $v/tests/attnscope.tests.gpu ]]; then
    echo "== conformance of $v"
    BIN=$v run_conformance "$FILTER" 200 | tail -12
  fi
done
for v in "$@"; do
  echo "== $v against $BASE (variant / base / variant)"
  BWD_D=${VARIANT_D:-64 128 192 256} "$HERE/bwd_wide_ab.sh" "$v" "$BASE" | paste - - - - - -
done
