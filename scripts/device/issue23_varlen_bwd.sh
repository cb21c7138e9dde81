#!/usr/bin/env bash
# Issue 23 on the device: fa2.mma's varlen backward. Usage: scripts/device/issue23_varlen_bwd.sh NEW [OLD]
# NEW (and OLD, the binary before it) hold attnscope and tests/attnscope.tests.gpu.
#  1. the backward conformance matrix (varlen cases among them) for fa2.mma and cuda.reference,
#     and fa2.mma's spec tests;
#  2. with OLD: fa2.mma's dense backward on fa2-tokens16k, NEW/OLD/NEW (the varlen kernel is a
#     separate instantiation; the dense one's indexing was rewritten around the sequence's rows);
#  3. fa2.mma forward and backward on training-size varlen batches beside the dense batch of the
#     same longest length.
set -uo pipefail
NEW=${1:?binary folder}
OLD=${2:-}
source "$(dirname "$0")/common.sh" "$NEW"
if [[ -z ${SKIP_TESTS:-} ]]; then
  run_conformance "Registry/BackwardConformance.*/fa2_mma:Registry/BackwardConformance.*/cuda_reference:Fa2MmaSpec.*:Varlen/VarlenKernelTest.*fa2_mma_d64_fp16*" 420
  grep -E "^\[conformance\]|varlen" "$OUT/conformance.log" | grep -E "conformance\]|mismatch|error" | head -20
fi
if [[ -n $OLD ]]; then
  AB_PASS=bwd AB_SEQ=${AB_SEQ:-2048,8192} AB_D=${AB_D:-64,128} OUT=$OUT bash scripts/device/fa2_ab.sh "$NEW" "$OLD" |
    tail -12
fi
$ATTNSCOPE_BIN run --kernels fa2.mma --batch 16 --heads 16 --seq 4096 --head-dim 64,128 --causal 1 --dtype fp16 \
  --varlen 'lognormal:1024:0.8@1;uniform:64@2;none' --pass fwd,bwd --l2 warm --metrics none \
  --out "$OUT/varlen_bwd" 2>&1 | grep -E "^fa2|cases" | cut -c1-160
