#!/usr/bin/env bash
# fa2.mma knob settings side by side in one device call: binary folder $1, the kernel list (with knobs)
# in $AB_KERNELS (default: the default tiles against cols=2). Runs the list, then the list reversed,
# so a drift of the GPU's clocks shows as disagreement between the two passes; fa2-tokens16k cases with
# S in $AB_SEQ (2048,4096,8192,16384), D in $AB_D (256), causal 0 and 1, $AB_DTYPE (fp16),
# --metrics none. Prints TFLOPS (rel L2) per case, kernel and pass.
set -uo pipefail
BIN=${1:?binary folder}
OUT=${OUT:-/tmp/out}
KERNELS=${AB_KERNELS:-fa2.mma,fa2.mma@cols=2}
REVERSED=$(echo "$KERNELS" | tr ',' '\n' | tac | paste -sd, -)
export ATTNSCOPE_PRESETS=$PWD/assets/presets
date -u
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
n=0
for list in "$KERNELS" "$REVERSED"; do
  n=$((n + 1))
  timeout "${AB_TIMEOUT_S:-200}" env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu "$BIN/attnscope" run --quiet \
    --preset fa2-tokens16k --kernels "$list" --baseline "${list%%,*}" --seq "${AB_SEQ:-2048,4096,8192,16384}" \
    --head-dim "${AB_D:-256}" --causal 0,1 --dtype "${AB_DTYPE:-fp16}" --metrics none \
    --max-time-s "${AB_MAX_TIME_S:-0.3}" --out "/tmp/knobs_$n" --force > "$OUT/knobs_$n.log" 2>&1
  echo "pass $n ($list) rc=$?"
  cp "/tmp/knobs_$n/results.jsonl" "$OUT/knobs_$n.jsonl"
done
python3 - "$OUT"/knobs_1.jsonl "$OUT"/knobs_2.jsonl <<'PY'
import json, sys
rows = {}
for pass_no, f in enumerate(sys.argv[1:], 1):
    for line in open(f):
        r = json.loads(line)
        if "kernel" not in r:
            continue
        p = r["problem"]
        name = r.get("variant", r["kernel"])
        case = (p["head_dim"], int(p.get("causal", False)), p["seq_q"])
        ok = r["status"] == "ok"
        cell = f'{r.get("tflops", 0.0):.1f} ({(r.get("correctness") or {}).get("rel_l2")})' if ok else r["status"]
        rows.setdefault((case, name), {})[pass_no] = cell
print("D causal S | kernel | pass 1 | pass 2   [TFLOPS (rel_l2)]")
for (case, name), cells in sorted(rows.items()):
    print(case, "|", name, "|", cells.get(1, "-"), "|", cells.get(2, "-"))
PY
