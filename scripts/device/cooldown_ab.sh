#!/usr/bin/env bash
# Does the order of a problem's kernels change their figures, and does --cooldown-ms take that out?
# fa2-tokens16k (fp16, full mask) with cudnn.sdpa and fa3.wgmma listed in both orders, without and
# with a cool-down before each case; prints TFLOPS, the mean SM clock while timing and fa3/cuDNN.
# Usage: scripts/device/cooldown_ab.sh BIN   (COOL_MS: the cool-down, default 1000)
set -uo pipefail
source "$(dirname "$0")/common.sh" "${1:-build}"
cool=${COOL_MS:-1000}
for cd in 0 "$cool"; do
  for order in cudnn.sdpa,fa3.wgmma fa3.wgmma,cudnn.sdpa; do
    tag="cd${cd}_${order%%,*}"
    timeout 300 "$BIN/attnscope" run --quiet --preset fa2-tokens16k --seq "${COOL_SEQ:-2048,8192}" \
      --head-dim "${COOL_D:-64,128,256}" --causal 0 --dtype fp16 --kernels "$order" --no-check \
      --metrics none --max-time-s "${COOL_MAX_TIME_S:-0.5}" --cooldown-ms "$cd" --out "$OUT/$tag" --force \
      > "$OUT/$tag.log" 2>&1
    echo "== $tag rc=$?"; grep -E "^time:" "$OUT/$tag.log"
  done
done
python3 - "$OUT" "$cool" <<'PY'
import json, sys
out, cool = sys.argv[1], sys.argv[2]
rows = {}
for cd in ["0", cool]:
    for first in ["cudnn.sdpa", "fa3.wgmma"]:
        for line in list(open(f"{out}/cd{cd}_{first}/results.jsonl"))[1:]:
            r = json.loads(line); p = r["problem"]
            key = (p["head_dim"], p["seq_q"])
            clk = (r.get("clocks") or {}).get("sm_mhz", 0)
            rows.setdefault(key, {})[(cd, first, r["kernel"])] = (r.get("tflops", 0), clk)
print("D S | cool-down | first | cuDNN TFLOPS (MHz) | fa3 TFLOPS (MHz) | fa3/cuDNN")
for key in sorted(rows):
    for cd in ["0", cool]:
        for first in ["cudnn.sdpa", "fa3.wgmma"]:
            c = rows[key].get((cd, first, "cudnn.sdpa"), (0, 0)); f = rows[key].get((cd, first, "fa3.wgmma"), (0, 0))
            print(f"{key[0]} {key[1]} | {cd} ms | {first[:5]} | {c[0]:.1f} ({c[1]:.0f}) | {f[0]:.1f} ({f[1]:.0f}) | {f[0] / max(c[0], 1e-9):.3f}")
PY
