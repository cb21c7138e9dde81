#!/usr/bin/env bash
# issue 21's table under a fair protocol: fa2-tokens16k (S 2048/8192, D 64/128/256, causal 0/1, fp16
# and bf16), cudnn.sdpa first, then fa3.wgmma and fa2.mma, with --cooldown-ms so that no kernel
# inherits the clock state of the one before; then PyTorch's flash and the Triton anchor
# (anchors.py, its own timer) in the same call. Usage: scripts/device/fa3_fair.sh BIN ANCHORS_PY
# (FAIR_KERNELS: the kernel list, knobbed variants included; FAIR_ANCHOR_DTYPES: the anchors' dtypes;
# FAIR_ANCHOR_TIMEOUT_S: each anchors run's limit, 240 s: with the GPU tests before it, a call of 2026-11-28
# ran past the device's 600 s while the anchors ran, and the table printed before them never came back;
# FAIR_ANCHOR_D and FAIR_ANCHOR_IMPL: the anchors' head dims (64,128,256) and implementations (flash,triton))
set -uo pipefail
source "$(dirname "$0")/common.sh" "${1:-build}"
ANCHORS=${2:-dev-carry/z/anchors.py}
timeout 500 "$BIN/attnscope" run --quiet --preset fa2-tokens16k --seq 2048,8192 --head-dim 64,128,256 \
  --causal 0,1 --dtype fp16,bf16 --kernels "${FAIR_KERNELS:-cudnn.sdpa,fa3.wgmma,fa2.mma}" --baseline cudnn.sdpa --no-check \
  --metrics none --max-time-s "${FAIR_MAX_TIME_S:-0.3}" --cooldown-ms "${FAIR_COOL_MS:-800}" \
  --out "$OUT/fair" --force > "$OUT/fair.log" 2>&1
echo "fair rc=$?"; grep -E "^time:" "$OUT/fair.log"
python3 - "$OUT/fair/results.jsonl" <<'PY'
import json, sys
rows, names = {}, []
for line in list(open(sys.argv[1]))[1:]:
    r = json.loads(line); p = r["problem"]
    if r["status"] != "ok": continue
    key = (p["dtype"], p["head_dim"], int(p.get("causal", False)), p["seq_q"])
    clk = (r.get("clocks") or {}).get("sm_mhz", 0)
    name = r.get("variant") or r["kernel"]  # a knobbed variant as --kernels names it
    if name not in names: names.append(name)
    rows.setdefault(key, {})[name] = (r.get("tflops", 0), clk)
print("dtype D causal S | " + " | ".join(names) + " | fa3.wgmma/cuDNN   [TFLOPS (mean SM MHz)]")
for key in sorted(rows):
    cells = [rows[key].get(n) for n in names]
    c, f = rows[key].get("cudnn.sdpa", (0, 0)), rows[key].get("fa3.wgmma", (0, 0))
    print(*key, "| " + " | ".join(f"{v[0]:.1f} ({v[1]:.0f})" if v else "-" for v in cells) + f" | {f[0] / max(c[0], 1e-9):.3f}")
PY
for dt in ${FAIR_ANCHOR_DTYPES:-fp16 bf16}; do
  (unset LD_LIBRARY_PATH; timeout "${FAIR_ANCHOR_TIMEOUT_S:-240}" python3 "$ANCHORS" --d "${FAIR_ANCHOR_D:-64,128,256}" --s 2048,8192 \
    --causal 0,1 --impl "${FAIR_ANCHOR_IMPL:-flash,triton}" --dtype "$dt" 2>&1 | tail -30)
done
