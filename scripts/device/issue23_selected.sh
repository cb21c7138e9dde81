#!/usr/bin/env bash
# Issue 23 on the device: NSA's selected branch.
# Usage: scripts/device/issue23_selected.sh NEW [OLD]; NEW (and OLD, a binary before the branch)
# hold attnscope and tests/attnscope.tests.gpu.
#  1. fa2.mma's selected-branch tests (GQA, partial last query block, l' = 64..256, n = 1..64), the
#     conformance of every kernel on the matrix's selected cases, and fa2.mma's other tests;
#  2. with OLD: fa2.mma dense on fa2-tokens16k, NEW/OLD/NEW (the selected kernel is a separate
#     instantiation, but the loop it shares changed shape: dense code should time the same);
#  3. the nsa-selected preset (fa2.mma against masked SDPA, and dense causal on the same shapes) with
#     its report, and fa2.mma selected against fa2.mma causal at NSA's 64k-token scale.
set -uo pipefail
NEW=${1:?binary folder}
OLD=${2:-}
source "$(dirname "$0")/common.sh" "$NEW"
if [[ -z ${SKIP_TESTS:-} ]]; then
  run_conformance "${FILTER:-Fa2/Fa2MmaTest.*:Fa2MmaSpec.*:Registry/*Conformance.*}" 480
  grep -E "sel[0-9]" "$OUT/conformance.log" | grep -E "^\[|ok|mismatch" | cut -c1-200 | head -40
fi
if [[ -n $OLD ]]; then
  AB_SEQ=${AB_SEQ:-2048,8192} AB_D=${AB_D:-64,128,256} OUT=$OUT bash scripts/device/fa2_ab.sh "$NEW" "$OLD" | tail -16
fi
[[ -n ${TESTS_ONLY:-} ]] && exit 0
$ATTNSCOPE_BIN run --preset nsa-selected --out "$OUT/nsa-selected" 2>&1 | tail -40
$ATTNSCOPE_BIN report "$OUT/nsa-selected" --out "$OUT/nsa-selected/report.md" 2>&1 | tail -2
# NSA's scale: 64k tokens, 64 query heads in 4 KV groups; the selected branch against dense causal.
$ATTNSCOPE_BIN run --kernels fa2.mma --batch 1 --heads 64 --heads-kv 4 --head-dim 128 --seq 32768,65536 \
  --select '64,16' --metrics none --out "$OUT/sel64k" --quiet 2>&1 | tail -3
$ATTNSCOPE_BIN run --kernels fa2.mma --batch 1 --heads 64 --heads-kv 4 --head-dim 128 --seq 32768,65536 \
  --causal 1 --metrics none --out "$OUT/causal64k" --quiet 2>&1 | tail -3
python3 - "$OUT"/nsa-selected/results.jsonl "$OUT"/sel64k/results.jsonl "$OUT"/causal64k/results.jsonl <<'PY'
import json, sys
print("file            kernel          S      mask        status  ms        TFLOPS  rel_l2")
for f in sys.argv[1:]:
    for l in open(f):
        r = json.loads(l)
        if "kernel" not in r: continue
        p = r["problem"]; sel = p.get("select"); mask = f"sel{sel[0]}x{sel[1]}" if sel else ("causal" if p["causal"] else "full")
        print(f"{f.split('/')[-2]:<15} {r['kernel']:<15} {p['seq_q']:<6} {mask:<11} {r['status']:<7} "
              f"{r.get('timing', {}).get('median_ms', 0):9.4f} {r.get('tflops', 0):7.1f} "
              f"{(r.get('correctness') or {}).get('rel_l2', '-')}  {r.get('reason', '')[:60]}")
PY
