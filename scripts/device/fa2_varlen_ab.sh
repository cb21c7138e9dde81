#!/usr/bin/env bash
# fa2.mma varlen forward A/B/A in one device call: binaries $1 (new) and $2 (old), run new, old, new
# on training-size varlen batches (16 or 64 sequences, lognormal and uniform lengths up to 4096),
# D 64 and 128, causal 0 and 1, fp16, --metrics none; prints TFLOPS per case and run. VAB_PASS=bwd
# times the backward instead (warm L2, as fa2_ab.sh), VAB_BATCH the sequence counts (default 16,64).
set -uo pipefail
NEW=${1:?new binary folder}
OLD=${2:?old binary folder}
OUT=${OUT:-/tmp/out}
PASS=${VAB_PASS:-fwd}
extra=()
[[ $PASS == fwd ]] || extra=(--l2 warm)
export ATTNSCOPE_PRESETS=$PWD/assets/presets
date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
n=0
for b in "$NEW" "$OLD" "$NEW"; do
  n=$((n + 1))
  timeout 150 env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu "$b/attnscope" run --quiet --kernels fa2.mma \
    --batch "${VAB_BATCH:-16,64}" --heads 16 --seq 4096 --head-dim 64,128 --causal 0,1 --dtype fp16 \
    --varlen 'lognormal:1024:0.8@1;uniform:64@2;lognormal:512:1.0@3' --pass "$PASS" "${extra[@]}" --metrics none --max-time-s 0.3 \
    --out /tmp/vab_$n --force > "$OUT/vab_$n.log" 2>&1
  echo "run $n ($b) rc=$?"
  cp /tmp/vab_$n/results.jsonl "$OUT/vab_$n.jsonl"
done
python3 - "$OUT"/vab_1.jsonl "$OUT"/vab_2.jsonl "$OUT"/vab_3.jsonl <<'PY'
import json, sys
runs = []
for f in sys.argv[1:]:
    t = {}
    for l in open(f):
        r = json.loads(l)
        if "kernel" not in r: continue
        p = r["problem"]; q = p["varlen"]["q"]
        k = (p["head_dim"], int(p.get("causal", False)), len(q), sum(q), max(q))
        t[k] = r.get("tflops", 0.0) if r["status"] == "ok" else r["status"]
    runs.append(t)
print("D causal n tokens longest | new | old | new   [TFLOPS]")
for k in sorted(runs[0]):
    print(k, " | ".join(f"{t[k]:.1f}" if isinstance(t.get(k), float) else str(t.get(k)) for t in runs))
PY
