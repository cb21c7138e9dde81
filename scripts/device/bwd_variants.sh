#!/usr/bin/env bash
# fa2.mma backward: the base binary's conformance, then each variant folder's (where it has its own
# tests binary) and the variant against the base, variant/base/variant, at every D in VARIANT_D
# (tokens16k with H = 2048 / D rounded down, S 2048 and 8192, causal 0 and 1, fp16, warm L2,
# --no-check: the conformance above checked the code). One line a case and run.
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
  for d in ${VARIANT_D:-64 128 192 256}; do
    for s in 2048 8192; do
      n=0
      for b in "$v" "$BASE" "$v"; do
        n=$((n + 1))
        timeout 120 "$b/attnscope" run --quiet --kernels fa2.mma --batch $((16384 / s)) --heads $((2048 / d)) \
          --seq $s --head-dim $d --causal 0,1 --pass bwd --l2 warm --no-check --metrics none --max-time-s 0.3 \
          --out /tmp/vab_$n --force > /dev/null 2>&1
        python3 - /tmp/vab_$n/results.jsonl "$d $s run$n" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "kernel" in r:
        print(sys.argv[2], "causal", int(r["problem"].get("causal", False)), f'{r.get("tflops", 0):.1f}', r["status"])
PY
      done
    done
  done | paste - - - - - -
done
