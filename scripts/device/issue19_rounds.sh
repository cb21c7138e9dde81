#!/usr/bin/env bash
# Issue 19's 3% comparison: ROUNDS alternating rounds of the torch.* adapters through attnscope and of
# ../shared/tools/anchors.py (same shapes: fa2-tokens16k at S 2048/8192, L2 warm), then the medians.
# Usage: scripts/device/issue19_rounds.sh BINDIR   (BINDIR as for issue19_python.sh); PASS=bwd for
# the backward (anchors.py times autograd.grad alone), REPS the anchors' and attnscope's samples.
set -uo pipefail
source "$(dirname "$0")/common.sh"
# PyTorch's own cuDNN and cuBLAS (its RUNPATH), not the system's that common.sh puts first, on both
# sides of the comparison: attnscope's binary finds the system's through the default search path.
unset LD_LIBRARY_PATH
export ATTNSCOPE_PYTHON=python3 PYTHONPATH=$PWD/$BIN/python PYTHONUNBUFFERED=1
ROUNDS=${ROUNDS:-3}
results=() anchors=()
for i in $(seq "$ROUNDS"); do
  $ATTNSCOPE_BIN run --preset fa2-tokens16k --seq 2048,8192 --pass "${PASS:-fwd}" \
    --kernels torch.flash,torch.cudnn,torch.efficient --l2 warm --metrics none --no-check \
    --min-samples "${REPS:-50}" --max-time-s 1 --quiet --out "$OUT/py$i" 2>&1 | tail -2
  python3 "$BIN/anchors.py" --pass "${PASS:-fwd}" --d 64,128,256 --s 2048,8192 --causal 0,1 \
    --impl flash,cudnn,efficient --reps "${REPS:-100}" --json "$OUT/anchors$i.json" 2>&1 | tail -1
  results+=("$OUT/py$i/results.jsonl") anchors+=("$OUT/anchors$i.json")
done
python3 scripts/device/compare_python_door.py --results "${results[@]}" --anchors "${anchors[@]}"
