#!/usr/bin/env bash
# fa2.mma A/B/A in one device call: binaries $1 (new) and $2 (old), run new, old, new on the
# fa2-tokens16k cases S in $AB_SEQ (default 2048,4096,16384), D in $AB_D (128,256), causal 0 and 1,
# fp16, pass $AB_PASS (fwd; bwd times the backward, warm L2 as PyTorch's are timed), --metrics none;
# prints TFLOPS (rel L2 of O, or of dQ for bwd) per case and run.
set -uo pipefail
NEW=${1:?new binary folder}
OLD=${2:?old binary folder}
OUT=${OUT:-/tmp/out}
PASS=${AB_PASS:-fwd}
export ATTNSCOPE_PRESETS=$PWD/assets/presets
date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
extra=()
[[ $PASS == fwd ]] || extra=(--l2 warm)
n=0
for b in "$NEW" "$OLD" "$NEW"; do
  n=$((n + 1))
  timeout 150 env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu "$b/attnscope" run --quiet --preset fa2-tokens16k \
    --kernels fa2.mma --baseline fa2.mma --seq "${AB_SEQ:-2048,4096,16384}" --head-dim "${AB_D:-128,256}" \
    --causal 0,1 --dtype fp16 --pass "$PASS" "${extra[@]}" --metrics none --max-time-s "${AB_MAX_TIME_S:-0.3}" \
    --out /tmp/ab_$n --force > "$OUT/ab_$n.log" 2>&1
  echo "run $n ($b) rc=$?"
  cp /tmp/ab_$n/results.jsonl "$OUT/ab_$n.jsonl"
done
python3 - "$OUT"/ab_1.jsonl "$OUT"/ab_2.jsonl "$OUT"/ab_3.jsonl <<'PY'
import json, sys
runs = []
for f in sys.argv[1:]:
    t = {}
    for l in open(f):
        r = json.loads(l)
        if "kernel" not in r: continue
        p = r["problem"]; k = (p["head_dim"], int(p.get("causal", False)), p["seq_q"])
        err = (r.get("correctness") or {}).get("rel_l2")
        if err is None:
            err = ((r.get("grad_check") or {}).get("dq") or {}).get("rel_l2")
        t[k] = (r.get("tflops", 0.0), err) if r["status"] == "ok" else (0.0, r["status"])
    runs.append(t)
print("D causal S | new | old | new   [TFLOPS (rel_l2)]")
for k in sorted(runs[0]):
    print(k, " | ".join(f"{t[k][0]:.1f} ({t[k][1]})" if k in t else "-" for t in runs))
PY
