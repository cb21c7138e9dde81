#!/usr/bin/env bash
# Issue 23 on the device: NSA's compressed branch. Usage: scripts/device/issue23_nsa.sh NEW [OLD]
# NEW (and OLD, the binary before the branch) hold attnscope, tests/attnscope.tests.gpu and
# python/attnscope (the module for the device's python3).
#  1. the GPU conformance suite's forward and backward matrices (compressed cases among them) for
#     the kernels that take the branch, and the fa2.mma unit tests;
#  2. with OLD: fa2.mma on fa2-tokens16k causal/full, NEW/OLD/NEW, the band test's cost;
#  3. the nsa preset with PyTorch's masked SDPA (torch.efficient, torch.math) beside it, and the two
#     thresholds from `attnscope crossover`, as text, TOML and Markdown; the GPU pytest of the
#     compressed branch through the adapters (torch.flex among them).
set -uo pipefail
NEW=${1:?binary folder}
OLD=${2:-}
source "$(dirname "$0")/common.sh" "$NEW"
if [[ -z ${SKIP_TESTS:-} ]]; then
  ks="fa2_mma cuda_reference cublas_unfused naive_unfused"
  filter=""
  for k in $ks; do filter="$filter:Registry/*Conformance.*/$k"; done
  run_conformance "${filter#:}:Fa2/Fa2MmaTest.*" 420
fi
if [[ -n $OLD ]]; then
  AB_SEQ=${AB_SEQ:-2048,8192} AB_D=${AB_D:-64,128} OUT=$OUT bash scripts/device/fa2_ab.sh "$NEW" "$OLD" |
    tail -20
fi
unset LD_LIBRARY_PATH  # PyTorch's own cuDNN for the adapters
export ATTNSCOPE_PYTHON=python3 PYTHONPATH=$PWD/$NEW/python PYTHONUNBUFFERED=1
$ATTNSCOPE_BIN kernels | grep -E "^(id|fa2|cublas|cudnn|cuda|naive|torch|triton)" | cut -c1-150
$ATTNSCOPE_BIN run --preset nsa --kernels fa2.mma,cublas.unfused,cudnn.sdpa,naive.unfused,torch.efficient,torch.math \
  --baseline cublas.unfused --out "$OUT/nsa" --quiet 2>&1 | tail -60
for axis in "window fa2_min_len_win" "seq_kv fa2_min_len_cmp"; do
  set -- $axis
  for b in cublas.unfused torch.efficient; do
    $ATTNSCOPE_BIN crossover "$OUT/nsa" --a fa2.mma --b "$b" --axis "$1" --key "$2" \
      -o "$OUT/nsa/$2-vs-$b.toml" --md "$OUT/nsa/$2-vs-$b.md" 2>&1 | head -40
  done
done
$ATTNSCOPE_BIN report "$OUT/nsa" --out "$OUT/nsa/report.md" 2>&1 | tail -3
python3 -m pytest -q -p no:cacheprovider -m gpu -rs -k compressed tests/python 2>&1 | tail -8
