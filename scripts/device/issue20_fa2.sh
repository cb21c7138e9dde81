#!/usr/bin/env bash
# One device call for fa2.mma's backward (issue 20): its backward conformance matrix, memcheck on a
# small GQA causal case, then tokens16k D 64/128 beside cudnn.sdpa and PyTorch's FA2 and cuDNN
# backward (anchors.py) in the same call, warm L2 on both sides.
#   ANCHORS=dev-carry/z/anchors.py scripts/device/issue20_fa2.sh dev-carry/new
set -uo pipefail
source "$(dirname "$0")/common.sh"
run_conformance "${FILTER:-Registry/BackwardConformance.*fa2_mma}" "${SUITE_S:-200}"
if [[ -z "${SKIP_MEMCHECK:-}" ]]; then
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 7 "$ATTNSCOPE_BIN" run --in-process \
    --kernels fa2.mma --batch 1 --heads 8 --heads-kv 2 --seq-q 100 --seq-kv 300 --head-dim 64 --causal 1 \
    --pass bwd --metrics none --max-time-s 0.01 --out "$OUT/memcheck" --force > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|Invalid|ok|mismatch" "$OUT/memcheck.log" | head -5
fi
T0=$(date +%s)
"$ATTNSCOPE_BIN" run --kernels fa2.mma,cudnn.sdpa --tokens 16384 --hidden 2048 --seq 2048,8192 --head-dim 64,128 \
  --causal 0,1 --pass fwd,bwd --l2 warm --metrics none --out "$OUT/tokens16k" --force > "$OUT/tokens16k.log" 2>&1
echo "tokens16k rc=$? t=$(( $(date +%s) - T0 ))s"
grep -vE "^\[[0-9]+/[0-9]+\]" "$OUT/tokens16k.log" | grep -E "fa2.mma|cases" | head -20
python3 "${ANCHORS:-../shared/tools/anchors.py}" --d 64,128 --pass bwd --impl flash,cudnn --json "$OUT/anchors.json" > "$OUT/anchors.log" 2>&1
python3 scripts/device/compare_anchors.py "$OUT/tokens16k/results.jsonl" "$OUT/anchors.json" fa2.mma
