#!/usr/bin/env bash
# Issue 22/25: the 60-case scale-out sweep (fa2.mma, cudnn.sdpa, cublas.unfused x B2 H16 S 1k-16k x
# D 64,128 x causal 0,1) with its per-phase breakdown, and Nsight Compute beside the metrics pass.
# RUNS: space-separated NAME:ARGS entries (ARGS with ',' for spaces and '+' for a comma), e.g.
#   RUNS="none1:--metrics,none,--devices,0 def1:--devices,0 two:--devices,0+1 all1:--devices,all"
# NCU_CASES: KERNEL:SEQ:D:CAUSAL entries whose recorded ncu_command is run (from run $NCU_FROM).
set -uo pipefail
BIN=${BIN:-dev-carry/new}
OUT=${OUT:-/tmp/out}
export ATTNSCOPE_PRESETS=$PWD/assets/presets
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
date -u; nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
SWEEP="--kernels fa2.mma,cudnn.sdpa,cublas.unfused --batch 2 --heads 16 --seq 1024:16384:x2 --head-dim 64,128 --causal 0,1"
for entry in ${RUNS:-none1:--metrics,none}; do
  name=${entry%%:*}; args=${entry#*:}; args=${args//,/ }; args=${args//+/,}
  T0=$(date +%s.%N)
  $BIN/attnscope run $SWEEP $args --quiet --out $OUT/$name --force > $OUT/$name.log 2>&1
  rc=$?
  echo "== $name ($args): rc=$rc wall=$(python3 -c "import time;print(round(time.time()-$T0,1))")s"
  grep -E "^time:|^      outside|cases:" $OUT/$name.log
  python3 - "$OUT/$name" <<'PY'
import json, sys, collections
lines = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")]
run, recs = lines[0], lines[1:]
print("  devices:", [(d.get("host"), d.get("index"), d.get("name"), d.get("uuid", "")[:12]) for d in run.get("devices", [])])
st = collections.Counter(r["status"] for r in recs)
print(f"  statuses: {dict(st)}; per device: {dict(collections.Counter((r.get('place') or {}).get('device_index') for r in recs))}")
by = collections.defaultdict(lambda: collections.Counter())
for r in recs:
    for k, v in (r.get("phases") or {}).items(): by[r["kernel"]][k] += v
    by[r["kernel"]]["wall_s"] += r.get("wall_s", 0)
for k, c in by.items():
    print(f"  {k:16s} " + " ".join(f"{n[:-2]}={c[n]:.2f}" for n in ["wall_s","prepare_s","inputs_s","reference_s","check_s","warmup_s","timed_s","metrics_s","other_s"]))
top = sorted(recs, key=lambda r: -(r.get("phases") or {}).get("metrics_s", 0))[:4]
for r in top:
    m = r.get("metrics") or {}
    print(f"  metrics pass {r['kernel']} {r['case_id']}: {m.get('wall_s', 0):.2f} s replay={m.get('replay')} passes={m.get('passes')}")
for r in recs:
    if r["status"] != "ok": print(f"  {r['status']}: {r['kernel']} {r['case_id']}: {r.get('reason','')[:200]}")
PY
done
if [[ -n ${NCU_CASES:-} ]]; then
  src=${NCU_FROM:-def1}
  for sub in $NCU_CASES; do
    cmd=$(python3 - "$OUT/$src" "$sub" <<'PY'
import json, sys
kern, seq, d, causal = sys.argv[2].split(":")
for l in list(open(sys.argv[1] + "/results.jsonl"))[1:]:
    r = json.loads(l)
    p = r["problem"]
    if (r["kernel"], p["seq_q"], p["head_dim"], int(p["causal"])) == (kern, int(seq), int(d), int(causal)) and r.get("ncu_command"):
        m = r.get("metrics") or {}
        print(f"{r['kernel']}|{r['case_id']}|{m.get('wall_s', 0):.3f}|{r['ncu_command']}"); break
PY
)
    [[ -z $cmd ]] && { echo "== ncu $sub: no such case with an ncu_command"; continue; }
    IFS='|' read -r kern cid ours ncucmd <<<"$cmd"
    T0=$(date +%s.%N)
    (eval "$ncucmd") > $OUT/ncu-$cid.log 2>&1
    rc=$?
    echo "== ncu $kern $cid: rc=$rc ncu wall=$(python3 -c "import time;print(round(time.time()-$T0,2))") s; attnscope metrics pass $ours s"
    tail -3 $OUT/ncu-$cid.log | cut -c1-200
  done
fi
