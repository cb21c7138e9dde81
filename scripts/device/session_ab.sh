#!/usr/bin/env bash
# A/B of two builds in one device call: GPU tests of the new build ($AB_FILTER), then fa3.wgmma with
# cudnn.sdpa on fa2-tokens16k (old, new, old, new; fp16, --no-check: the tests check), the 60-case
# sweep's phases with --metrics none (old, new, old, new) and cuda.reference alone on its problems.
# Usage: scripts/device/session_ab.sh OLD_BIN NEW_BIN
set -uo pipefail
OLD=$1 NEW=$2
source "$(dirname "$0")/common.sh" "$NEW"
if [[ -n ${AB_FILTER:-} ]]; then
  run_conformance "$AB_FILTER" "${AB_TEST_SECONDS:-300}"
  grep -E "tests? ran|PASSED|FAILED  \]" "$OUT/conformance.log" | tail -3
fi
tokens16k() {  # BIN TAG
  timeout 200 "$1/attnscope" run --quiet --preset fa2-tokens16k --seq "${AB_SEQ:-2048,8192}" \
    --head-dim "${AB_D:-64,128,256}" --causal 0,1 --dtype "${AB_DTYPE:-fp16}" --kernels cudnn.sdpa,fa3.wgmma \
    --no-check --metrics none --max-time-s "${AB_MAX_TIME_S:-0.3}" --out "$OUT/t16k_$2" --force > "$OUT/t16k_$2.log" 2>&1
  echo "tokens16k $2 rc=$?"
}
if [[ ${AB_FA3:-1} == 1 ]]; then
  tokens16k "$OLD" old1; tokens16k "$NEW" new1; tokens16k "$OLD" old2; tokens16k "$NEW" new2
  python3 - "$OUT" <<'PY'
import json, sys
rows = {}
for tag in ["old1", "new1", "old2", "new2"]:
    for line in list(open(f"{sys.argv[1]}/t16k_{tag}/results.jsonl"))[1:]:
        r = json.loads(line); p = r["problem"]
        key = (p["dtype"], p["head_dim"], int(p.get("causal", False)), p["seq_q"])
        rows.setdefault(key, {})[f'{r["kernel"][:5]}:{tag}'] = f'{r.get("tflops", 0):.1f}' if r["status"] == "ok" else r["status"]
cols = sorted({k for v in rows.values() for k in v}, key=lambda c: (c[:5], c[-1], c[6:9]))
print("dtype D causal S | " + " | ".join(cols))
for key in sorted(rows): print(*key, "|", " | ".join(rows[key].get(c, "-") for c in cols))
PY
fi
if [[ ${AB_SWEEP:-1} == 1 ]]; then
  for tag in old1 new1 old2 new2; do
    bin=$OLD; [[ $tag == new* ]] && bin=$NEW
    ATTNSCOPE_TRACE_STAGES=1 BIN=$bin OUT=$OUT RUNS="$tag:--metrics,none,--devices,0" \
      bash "$(dirname "$0")/sweep_phases.sh" | grep -vE "metrics pass|devices:"
    # The new build's stage trace (ATTNSCOPE_TRACE_STAGES), summed per step over the problems.
    python3 - "$OUT/$tag/workers.log" <<'PY'
import collections, re, sys
tot, n = collections.Counter(), collections.Counter()
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"trace: (\S+) \S+ \S+ ([\d.]+) ms", line)
    if m: tot[m.group(1)] += float(m.group(2)); n[m.group(1)] += 1
for k in sorted(tot): print(f"  trace {k:28s} {tot[k] / 1e3:7.3f} s over {n[k]} problems")
PY
  done
fi
if [[ ${AB_REFERENCE:-1} == 1 ]]; then
  for tag in old new; do
    bin=$OLD; [[ $tag == new ]] && bin=$NEW
    timeout 200 "$bin/attnscope" run --quiet --kernels cuda.reference --dtype fp32 --batch 2 --heads 16 \
      --seq 1024:16384:x2 --head-dim 64,128 --causal 0,1 --no-check --metrics none --max-time-s 0.2 \
      --min-samples 3 --out "$OUT/reference_$tag" --force > "$OUT/reference_$tag.log" 2>&1
    echo "reference $tag rc=$?"
  done
  python3 - "$OUT" <<'PY'
import json, sys
res = {}
for tag in ["old", "new"]:
    for line in list(open(f"{sys.argv[1]}/reference_{tag}/results.jsonl"))[1:]:
        r = json.loads(line); p = r["problem"]
        key = (p["seq_q"], p["head_dim"], int(p.get("causal", False)))
        res.setdefault(key, {})[tag] = ((r.get("timing") or {}).get("median_ms", 0), r.get("tflops", 0), r["status"])
tot = {"old": 0, "new": 0}
for key in sorted(res):
    o, n = res[key].get("old", (0, 0, "-")), res[key].get("new", (0, 0, "-"))
    tot["old"] += o[0]; tot["new"] += n[0]
    print(f"  S{key[0]:6d} D{key[1]:4d} causal={key[2]}  old {o[0]:9.2f} ms {o[1]:6.2f} TF  new {n[0]:9.2f} ms {n[1]:6.2f} TF  {o[0] / max(n[0], 1e-9):.2f}x {n[2]}")
print(f"  total old {tot['old']:.1f} ms new {tot['new']:.1f} ms")
PY
fi
