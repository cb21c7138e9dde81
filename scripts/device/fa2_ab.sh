#!/usr/bin/env bash
# fa2.mma A/B/A in one device call: binaries $1 (new) and $2 (old), run new, old, new on the
# fa2-tokens16k cases S in $AB_SEQ (default 2048,4096,16384), D in $AB_D (128,256), causal 0 and 1,
# fp16, pass $AB_PASS (fwd; bwd times the backward, warm L2 as PyTorch's are timed), --metrics none;
# prints TFLOPS (rel L2 of O, or of dQ for bwd) per case and run. AB_VARLEN='spec;...' runs varlen
# batches instead (--varlen spec, $AB_BATCH sequences (16,64), H 16, up to 4096 tokens each, D in
# $AB_D (64,128), causal 0 and 1): scripts/device/fa2_varlen_ab.sh. AB_EXTRA: more flags for every run
# (e.g. --no-check, where a conformance run in the same call checked the code).
set -uo pipefail
NEW=${1:?new binary folder}
OLD=${2:?old binary folder}
OUT=${OUT:-/tmp/out}
PASS=${AB_PASS:-fwd}
export ATTNSCOPE_PRESETS=$PWD/assets/presets
date -u; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
extra=()
[[ $PASS == fwd ]] || extra=(--l2 warm)
if [[ -n ${AB_VARLEN:-} ]]; then
  cases=(--batch "${AB_BATCH:-16,64}" --heads 16 --seq 4096 --head-dim "${AB_D:-64,128}" --varlen "$AB_VARLEN")
else
  cases=(--preset fa2-tokens16k --seq "${AB_SEQ:-2048,4096,16384}" --head-dim "${AB_D:-128,256}")
fi
n=0
for b in "$NEW" "$OLD" "$NEW"; do
  n=$((n + 1))
  timeout 150 env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu "$b/attnscope" run --quiet "${cases[@]}" \
    --kernels fa2.mma --baseline fa2.mma --causal 0,1 --dtype fp16 --pass "$PASS" "${extra[@]}" \
    --metrics none --max-time-s "${AB_MAX_TIME_S:-0.3}" ${AB_EXTRA:-} \
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
        if "varlen" in p:  # sequences, tokens, longest
            q = p["varlen"]["q"]; k = (p["head_dim"], int(p.get("causal", False)), len(q), sum(q), max(q))
        err = (r.get("correctness") or {}).get("rel_l2")
        if err is None:
            err = ((r.get("grad_check") or {}).get("dq") or {}).get("rel_l2")
        t[k] = (r.get("tflops", 0.0), err) if r["status"] == "ok" else (0.0, r["status"])
    runs.append(t)
print(("D causal n tokens longest" if len(next(iter(runs[0]), ())) == 5 else "D causal S") +
      " | new | old | new   [TFLOPS (rel_l2)]")
for k in sorted(runs[0]):
    print(k, " | ".join(f"{t[k][0]:.1f} ({t[k][1]})" if k in t else "-" for t in runs))
PY
