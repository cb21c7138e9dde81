#!/usr/bin/env bash
# One device call per fa2.mma backward iteration (issue 20): the backward conformance matrix and the
# kernel's own GPU tests (FILTER), memcheck of a GQA causal Sq != Sk backward at MEMCHECK_D (64),
# new/old/new timing of tokens16k at AB_D (64,128) S 2048/8192 (fa2_ab.sh; a D the preset cannot
# split 2048 into needs bwd_wide_ab.sh), PyTorch's backward beside it (anchors.py at ANCHOR_D, default
# AB_D; ANCHOR_IMPL flash, or flash,cudnn), then ncu of the new key-block kernel at D 128 (SKIP_NCU=1:
# none) and the conformance lines once more for the tail.
#   ANCHORS=dev-carry/z/anchors.py scripts/device/bwd_iter.sh dev-carry/new dev-carry/old
set -uo pipefail
NEW=${1:?new binary folder}
OLD=${2:?old binary folder}
source "$(dirname "$0")/common.sh" "$NEW"
AB_D=${AB_D:-64,128}
run_conformance "${FILTER:-Registry/BackwardConformance.*fa2_mma:Fa2MmaSpec.*:Varlen*}" 400
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 7 "$ATTNSCOPE_BIN" run --in-process \
  --kernels fa2.mma --batch 1 --heads 8 --heads-kv 2 --seq-q 100 --seq-kv 300 --head-dim "${MEMCHECK_D:-64}" \
  --causal 1 --pass bwd --metrics none --max-time-s 0.01 --out "$OUT/memcheck" --force > "$OUT/memcheck.log" 2>&1
echo "memcheck d${MEMCHECK_D:-64} rc=$?"; grep -E "ERROR SUMMARY" "$OUT/memcheck.log" | head -3
AB_PASS=bwd AB_SEQ=2048,8192 AB_D=$AB_D "$(dirname "$0")/fa2_ab.sh" "$NEW" "$OLD"
( unset LD_LIBRARY_PATH; timeout 200 python3 "${ANCHORS:-../shared/tools/anchors.py}" --d "${ANCHOR_D:-$AB_D}" \
  --pass bwd --impl "${ANCHOR_IMPL:-flash}" --json "$OUT/anchors.json" > "$OUT/anchors.log" 2>&1; echo "anchors rc=$?" )
grep -E "^(flash|cudnn)" "$OUT/anchors.log" | head -30
[[ ${SKIP_NCU:-0} == 1 ]] || BWD_NCU_FA2=0 "$(dirname "$0")/bwd_ncu.sh" "$NEW"
echo "== conformance (again, for the tail)"; grep -E "^\[conformance\]|^\[  (PASSED|FAILED) \]" "$OUT/conformance.log" | head -12
grep -E "fa2.mma.*(mismatch|error|fault)" "$OUT/conformance.log" | cut -c1-300 | head -10
