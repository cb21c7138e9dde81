#!/usr/bin/env bash
# The nsa-varlen preset's example for docs/examples/nsa-varlen/: the run (fa2.mma and cudnn.sdpa
# packed, torch.varlen and torch.flex packed, fa2.mma, cudnn.sdpa and cublas.unfused dense-bucketed,
# `--metrics none`), fa2_min_len_win against the packed and bucketed baselines and fa2_min_len_cmp
# (the compressed branch along the longest drawn length) against masked SDPA in buckets and
# FlexAttention, and the report; packed as $OUT/nsa-varlen.tar.gz (one file comes back).
# Usage: scripts/device/issue23_varlen_example.sh BINDIR (attnscope and python/attnscope)
set -uo pipefail
source "$(dirname "$0")/common.sh"
unset LD_LIBRARY_PATH  # PyTorch's own cuDNN for the adapters
export ATTNSCOPE_PYTHON=python3 PYTHONPATH=$PWD/$BIN/python PYTHONUNBUFFERED=1
run=/tmp/nsa-varlen
$ATTNSCOPE_BIN run --preset nsa-varlen --kernels \
  "fa2.mma,cudnn.sdpa,fa2.mma@bucket=128,cudnn.sdpa@bucket=128,cublas.unfused@bucket=128,torch.varlen,torch.flex" \
  --metrics none --out $run --force --quiet 2>&1 | tail -4
for b in cudnn.sdpa fa2.mma@bucket=128 cudnn.sdpa@bucket=128; do
  tag=$([[ $b == *@bucket* ]] && echo "${b%@*}-bucketed" || echo "$b-packed")
  $ATTNSCOPE_BIN crossover $run --a fa2.mma --b "$b" --axis window --key fa2_min_len_win \
    -o "$run/fa2_min_len_win-vs-$tag.toml" --md "$run/fa2_min_len_win-vs-$tag.md" > /dev/null
done
for b in cublas.unfused@bucket=128 torch.flex; do
  tag=$([[ $b == *@bucket* ]] && echo "${b%@*}-bucketed" || echo "$b-packed")
  $ATTNSCOPE_BIN crossover $run --a fa2.mma --b "$b" --axis seq --mask cmp --key fa2_min_len_cmp \
    -o "$run/fa2_min_len_cmp-vs-$tag.toml" --md "$run/fa2_min_len_cmp-vs-$tag.md" 2>&1 | tail -3
done
$ATTNSCOPE_BIN report $run --out $run/report.md --no-svg 2>&1 | tail -1
tar -C /tmp -czf "$OUT/nsa-varlen.tar.gz" nsa-varlen
