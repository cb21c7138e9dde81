#!/usr/bin/env bash
# The nsa preset's example for docs/examples/nsa/: the run (fa2.mma, masked SDPA as cublas.unfused,
# torch.efficient and torch.math, cudnn.sdpa on the windows), both thresholds against both masked
# baselines (TOML and Markdown), and the report; packed as $OUT/nsa.tar.gz (one file comes back).
# Usage: scripts/device/issue23_example.sh BINDIR (attnscope and python/attnscope for the device's python3)
set -uo pipefail
source "$(dirname "$0")/common.sh"
unset LD_LIBRARY_PATH  # PyTorch's own cuDNN for the adapters
export ATTNSCOPE_PYTHON=python3 PYTHONPATH=$PWD/$BIN/python PYTHONUNBUFFERED=1
run=/tmp/nsa
$ATTNSCOPE_BIN run --preset nsa --kernels fa2.mma,cublas.unfused,cudnn.sdpa,torch.efficient,torch.math \
  --baseline cublas.unfused --out $run --force --quiet 2>&1 | tail -4
for axis in "window fa2_min_len_win" "seq_kv fa2_min_len_cmp"; do
  set -- $axis
  for b in cublas.unfused torch.efficient; do
    $ATTNSCOPE_BIN crossover $run --a fa2.mma --b "$b" --axis "$1" --key "$2" -o "$run/$2-vs-$b.toml" \
      --md "$run/$2-vs-$b.md" > /dev/null
  done
done
$ATTNSCOPE_BIN report $run --out $run/report.md 2>&1 | tail -1
tar -C /tmp -czf "$OUT/nsa.tar.gz" nsa
