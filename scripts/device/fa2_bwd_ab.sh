#!/usr/bin/env bash
# fa2.mma's backward A/B/A in one device call: binaries $1 (new) and $2 (old), run new, old, new on
# tokens16k S 2048/8192, D 64/128, causal 0/1, --pass bwd, L2 warm, no metrics; prints TFLOPS per case
# and run (dQ rel L2 in brackets).
set -uo pipefail
NEW=${1:?new binary folder}
OLD=${2:?old binary folder}
OUT=${OUT:-/tmp/out}
export ATTNSCOPE_PRESETS=$PWD/assets/presets
n=0
for b in "$NEW" "$OLD" "$NEW"; do
  n=$((n + 1))
  timeout 150 env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu "$b/attnscope" run --quiet --kernels fa2.mma \
    --tokens 16384 --hidden 2048 --seq 2048,8192 --head-dim 64,128 --causal 0,1 --pass bwd --l2 warm \
    --metrics none --max-time-s 0.3 --out /tmp/bwd_ab_$n --force > "$OUT/bwd_ab_$n.log" 2>&1
  echo "run $n ($b) rc=$?"
  cp /tmp/bwd_ab_$n/results.jsonl "$OUT/bwd_ab_$n.jsonl"
done
python3 - "$OUT"/bwd_ab_1.jsonl "$OUT"/bwd_ab_2.jsonl "$OUT"/bwd_ab_3.jsonl <<'PY'
import json, sys
runs = []
for f in sys.argv[1:]:
    t = {}
    for l in open(f):
        r = json.loads(l)
        if "kernel" not in r: continue
        p = r["problem"]; k = (p["head_dim"], int(p.get("causal", False)), p["seq_q"])
        dq = ((r.get("grad_check") or {}).get("dq") or {}).get("rel_l2")
        t[k] = (r.get("tflops", 0.0), dq) if r["status"] == "ok" else (0.0, r["status"])
    runs.append(t)
print("D causal S | new | old | new   [backward TFLOPS (dQ rel_l2)]")
for k in sorted(runs[0]):
    print(k, " | ".join(f"{t[k][0]:.1f} ({t[k][1]:.2e})" if k in t and isinstance(t[k][1], float) else str(t.get(k)) for t in runs))
PY
