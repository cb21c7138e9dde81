#!/usr/bin/env bash
# Issue 20's backward table in one call: fa2.mma, its lean tiles (bwd_buffers=1) and cudnn.sdpa through
# attnscope (tokens16k, S 2048/8192, D 64/128/256, causal 0/1, fp16, --pass bwd, warm L2, --no-check:
# run the conformance suite in the same call for the checks), then PyTorch's flash and cuDNN backward by
# anchors.py; prints TFLOPS (ms) per shape, fa2.mma / FA2 and cudnn.sdpa / torch cuDNN time.
#   ANCHORS=dev-carry/z/anchors.py scripts/device/bwd_table.sh dev-carry/new
set -uo pipefail
source "$(dirname "$0")/common.sh"
"$ATTNSCOPE_BIN" run --quiet --kernels cudnn.sdpa,fa2.mma,fa2.mma@bwd_buffers=1 --tokens 16384 --hidden 2048 \
  --seq 2048,8192 --head-dim 64,128,256 --causal 0,1 --pass bwd --l2 warm --no-check --metrics none \
  --max-time-s 0.3 --out "$OUT/table" --force > "$OUT/table.log" 2>&1
echo "table rc=$?"
( unset LD_LIBRARY_PATH; timeout 200 python3 "${ANCHORS:-../shared/tools/anchors.py}" --d 64,128,256 --pass bwd \
  --impl flash,cudnn --json "$OUT/anchors.json" > "$OUT/anchors.log" 2>&1; echo "anchors rc=$?" )
python3 - "$OUT/table/results.jsonl" "$OUT/anchors.json" <<'PY'
import json, sys
ours = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("record") != "case" or not r.get("tflops"): continue
    p = r["problem"]; k = r["kernel"] + ("@lean" if (r.get("knobs") or {}).get("bwd_buffers") == 1 else "")
    ours[(k, p["seq_q"], p["head_dim"], int(p["causal"]))] = (r["timing"]["median_ms"], r["tflops"])
an = {(a["impl"], a["S"], a["D"], a["causal"]): (a["ms"], a["tflops"]) for a in json.load(open(sys.argv[2]))
      if a.get("pass_") == "bwd"}
nan = (float("nan"),) * 2
print("S D causal | fa2.mma | fa2.mma lean | cudnn.sdpa | torch flash | torch cudnn | fa2/flash | cudnn.sdpa/torch cudnn (time)")
for s in (2048, 8192):
    for d in (64, 128, 256):
        for c in (0, 1):
            f, fl, cu = (ours.get((k, s, d, c), nan) for k in ("fa2.mma", "fa2.mma@lean", "cudnn.sdpa"))
            tf, tc = (an.get((k, s, d, c), nan) for k in ("flash", "cudnn"))
            print(f"{s} {d} {c} | {f[1]:.1f} ({f[0]:.3f}) | {fl[1]:.1f} | {cu[1]:.1f} ({cu[0]:.3f}) | "
                  f"{tf[1]:.1f} ({tf[0]:.3f}) | {tc[1]:.1f} ({tc[0]:.3f}) | {f[1] / tf[1]:.3f} | {cu[0] / tc[0]:.3f}")
PY
