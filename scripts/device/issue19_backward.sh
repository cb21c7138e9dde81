#!/usr/bin/env bash
# Issue 19's backward item on the device: the SDPA adapters' backward (torch.flash, torch.cudnn,
# torch.efficient) through attnscope beside the same backends' backward timed by anchors.py
# (autograd.grad alone), same call, L2 warm as the anchors run; then the GPU pytest of the adapters'
# backward. Usage: scripts/device/issue19_backward.sh BINDIR (attnscope, python/attnscope built for
# the device's python3, anchors.py).
set -uo pipefail
source "$(dirname "$0")/common.sh"
unset LD_LIBRARY_PATH  # PyTorch's own cuDNN on both sides (issue19_python.sh says why)
export ATTNSCOPE_PYTHON=python3 PYTHONPATH=$PWD/$BIN/python PYTHONUNBUFFERED=1
python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__)'
python3 -c 'import attnscope; print(attnscope._attnscope.build_version())' || exit 1
$ATTNSCOPE_BIN run --preset fa2-tokens16k --seq 2048,8192 --pass bwd --kernels torch.flash,torch.cudnn,torch.efficient \
  --l2 warm --metrics none --max-time-s 0.5 --quiet --out "$OUT/py" 2>&1 | tail -45
python3 "$BIN/anchors.py" --pass bwd --d 64,128,256 --s 2048,8192 --causal 0,1 --impl flash,cudnn,efficient \
  --json "$OUT/anchors.json" 2>&1 | tail -30
for k in torch.flash torch.cudnn torch.efficient; do
  python3 scripts/device/compare_anchors.py "$OUT/py/results.jsonl" "$OUT/anchors.json" $k ${k#torch.}
done
if [[ -z ${SKIP_PYTEST:-} ]]; then
  python3 -m pytest -q -p no:cacheprovider -m gpu -rs tests/python -k "${PYTEST_K:-backward}" 2>&1 | tail -25
fi
