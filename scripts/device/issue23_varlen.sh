#!/usr/bin/env bash
# Issue 23 on the device: fa2.mma's varlen forward and dense-bucketed execution.
# Usage: scripts/device/issue23_varlen.sh NEW [OLD]; NEW (and OLD, a binary before varlen) hold
# attnscope, tests/attnscope.tests.gpu and python/attnscope (the module for the device's python3).
#  1. fa2.mma's and cudnn.sdpa's varlen tests (lengths 1..4097 mixed, GQA, causal, windows, Sq != Sk),
#     its conformance and unit tests, and the packed-against-bucketed engine test;
#  2. with OLD: fa2.mma dense on fa2-tokens16k, NEW/OLD/NEW (the varlen kernel is a separate
#     instantiation: dense code should be unchanged);
#  3. varlen against dense buckets at training sizes: fa2.mma packed, PyTorch's varlen_attn, and
#     fa2.mma, cudnn.sdpa and torch.flash each dense-bucketed; then the nsa-varlen preset with its
#     report and its summary against fa2.mma@bucket=128; the GPU pytest of the varlen adapters
#     (TESTS_ONLY=1 stops before this part).
set -uo pipefail
NEW=${1:?binary folder}
OLD=${2:-}
source "$(dirname "$0")/common.sh" "$NEW"
if [[ -z ${SKIP_TESTS:-} ]]; then
  run_conformance "${FILTER:-Varlen/VarlenKernelTest.*:Fa2MmaSpec.*:CudnnSdpaSpec.*:EngineGpu.VarlenPackedAndDenseBucketed:Registry/*Conformance.*/fa2_mma:Registry/*Conformance.*/cudnn_sdpa:Fa2/Fa2MmaTest.*}" 480
  grep -E "^\[varlen\]" "$OUT/conformance.log" | cut -c1-220
fi
if [[ -n $OLD ]]; then
  AB_SEQ=${AB_SEQ:-2048,8192} AB_D=${AB_D:-64,128} OUT=$OUT bash scripts/device/fa2_ab.sh "$NEW" "$OLD" | tail -12
fi
[[ -n ${TESTS_ONLY:-} ]] && exit 0
unset LD_LIBRARY_PATH  # PyTorch's own cuDNN for the adapters
export ATTNSCOPE_PYTHON=python3 PYTHONPATH=$PWD/$NEW/python PYTHONUNBUFFERED=1
python3 -c "import torch, inspect; from torch.nn.attention.varlen import varlen_attn; print(torch.__version__, inspect.signature(varlen_attn))"
# Training-size varlen batches: 16k tokens on average, sequences up to 4096 (lognormal, mean 1024).
$ATTNSCOPE_BIN run --kernels "fa2.mma,torch.varlen,cudnn.sdpa,fa2.mma@bucket=128,cudnn.sdpa@bucket=128,torch.flash@bucket=128" \
  --baseline fa2.mma@bucket=128 --batch 16 --heads 16 --seq 4096 --head-dim 64,128 --causal 1 --dtype fp16 \
  --varlen 'lognormal:1024:0.8@1;uniform:64@2' --metrics none --out "$OUT/varlen" --quiet 2>&1 | tail -5
python3 - "$OUT/varlen/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])][1:]
print("D  lengths                 kernel                        status  ms      TFLOPS  waste  rel_l2")
for r in rows:
    p = r["problem"]; q = p["varlen"]["q"]
    print(f"{p['head_dim']:<3} n={len(q)} sum={sum(q):<6} max={max(q):<5} {r.get('variant') or r['kernel']:<30} "
          f"{r['status']:<7} {r.get('timing', {}).get('median_ms', 0):7.4f} {r.get('tflops', 0):7.1f} "
          f"{r.get('padding_waste', 0):5.3f} {(r.get('correctness') or {}).get('rel_l2', '-')}  {r.get('reason', '')[:80]}")
PY
$ATTNSCOPE_BIN run --preset nsa-varlen --kernels "fa2.mma,cudnn.sdpa,fa2.mma@bucket=128,cudnn.sdpa@bucket=128,cublas.unfused@bucket=128,torch.varlen" \
  --metrics none --out "$OUT/nsa-varlen" 2>&1 | tail -80
$ATTNSCOPE_BIN report "$OUT/nsa-varlen" --out "$OUT/nsa-varlen/report.md" 2>&1 | tail -2
python3 -m pytest -q -p no:cacheprovider -m gpu -rs -k varlen tests/python 2>&1 | tail -8
