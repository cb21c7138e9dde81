#!/usr/bin/env bash
# fa2.mma's backward above D 128 (warp pairs split D): the backward conformance matrix and fa2.mma's
# own GPU tests, memcheck of a D 256 GQA causal Sq != Sk case, new/old/new timing at D 128 and 256
# (the old binary refuses D 256: its column reads "refused"), PyTorch's FA2 and cuDNN backward
# beside them.
#   ANCHORS=dev-carry/z/anchors.py scripts/device/bwd_wide.sh dev-carry/new dev-carry/old
set -uo pipefail
NEW=${1:?new binary folder}
OLD=${2:?old binary folder}
source "$(dirname "$0")/common.sh" "$NEW"
run_conformance "${FILTER:-Registry/BackwardConformance.*:Fa2MmaSpec.*:Varlen*}" 400
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 7 "$ATTNSCOPE_BIN" run --in-process \
  --kernels fa2.mma --batch 1 --heads 8 --heads-kv 2 --seq-q 100 --seq-kv 300 --head-dim 256 --causal 1 \
  --pass bwd --metrics none --max-time-s 0.01 --out "$OUT/memcheck" --force > "$OUT/memcheck.log" 2>&1
echo "memcheck d256 rc=$?"; grep -E "ERROR SUMMARY" "$OUT/memcheck.log" | head -3
AB_PASS=bwd AB_SEQ=2048,8192 AB_D=${AB_D:-128,256} "$(dirname "$0")/fa2_ab.sh" "$NEW" "$OLD"
( unset LD_LIBRARY_PATH; timeout 200 python3 "${ANCHORS:-../shared/tools/anchors.py}" --d "${ANCHOR_D:-256}" \
  --pass bwd --impl flash,cudnn --json "$OUT/anchors.json" > "$OUT/anchors.log" 2>&1; echo "anchors rc=$?" )
grep -E "^(flash|cudnn)" "$OUT/anchors.log" | head -30
echo "== conformance (again, for the tail)"; grep -E "^\[conformance\]|^\[  (PASSED|FAILED) \]" "$OUT/conformance.log" | head -12
grep -E "fa2.mma.*(mismatch|error|fault)" "$OUT/conformance.log" | cut -c1-300 | head -10
