#!/usr/bin/env bash
# Issue 19 on the device: the Python door. Usage: scripts/device/issue19_python.sh BINDIR
# BINDIR holds attnscope, python/attnscope (the module built for the device's python3) and
# anchors.py. The SDPA adapters through attnscope and the same backends timed by anchors.py, in the
# same call and the same protocol where they can share it (L2 warm); then the GPU pytest suite
# (adapters, flex causal/window with metrics, a user's torch callable).
set -uo pipefail
source "$(dirname "$0")/common.sh"
# PyTorch's own cuDNN and cuBLAS (its RUNPATH), not the system's that common.sh puts first, on both
# sides of the comparison: attnscope's binary finds the system's through the default search path.
unset LD_LIBRARY_PATH
export ATTNSCOPE_PYTHON=python3 PYTHONPATH=$PWD/$BIN/python PYTHONUNBUFFERED=1
python3 -c 'import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)'
python3 -c 'import attnscope; print(attnscope._attnscope.build_version())' || exit 1
$ATTNSCOPE_BIN kernels | sed -n '/Python adapters/,$p'
# attnscope: the fa2-tokens16k shapes at S 2048/8192, L2 warm as the anchors time them.
$ATTNSCOPE_BIN run --preset fa2-tokens16k --seq 2048,8192 --kernels torch.flash,torch.cudnn,torch.efficient,${EXTRA:-cudnn.sdpa} \
  --l2 warm --metrics ${METRICS:-none} --max-time-s 0.5 --quiet --out "$OUT/py" 2>&1 | tail -40
python3 "$BIN/anchors.py" --d 64,128,256 --s 2048,8192 --causal 0,1 --impl flash,cudnn,efficient \
  --json "$OUT/anchors.json" 2>&1 | tail -30
for k in torch.flash torch.cudnn torch.efficient; do
  python3 scripts/device/compare_anchors.py "$OUT/py/results.jsonl" "$OUT/anchors.json" $k ${k#torch.}
done
if [[ -z ${SKIP_PYTEST:-} ]]; then
  python3 -m pytest -q -p no:cacheprovider -m gpu -rs tests/python 2>&1 | tail -25
fi
