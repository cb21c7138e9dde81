#!/usr/bin/env bash
# fa3.wgmma on the H100 in one device call: the GPU correctness suite (Fa3/*), then the issue-21
# timing table: fa2-tokens16k at S $FA3_SEQ (2048,8192), D $FA3_D (64,128,256), causal 0 and 1, fp16
# (and bf16 with FA3_BF16=1), fa3.wgmma against cudnn.sdpa and fa2.mma in the same run, --metrics none.
# Usage: scripts/device/fa3_run.sh BIN   (BIN holds attnscope and tests/attnscope.tests.gpu)
set -uo pipefail
source "$(dirname "$0")/common.sh" "${1:-build}"
if [[ ${FA3_SKIP_TESTS:-0} != 1 ]]; then
  run_conformance "${FA3_FILTER:-Fa3*}" "${FA3_TEST_SECONDS:-400}"
  grep -E "^\[fa3.wgmma\]" "$OUT/conformance.log" | awk '{print $2, $5, $6, $7, $8, $9, $10}' | head -80
  grep -E "tests? ran|PASSED|FAILED  \]" "$OUT/conformance.log" | tail -3
fi
dtypes=fp16
[[ ${FA3_BF16:-0} == 1 ]] && dtypes=fp16,bf16
timeout 400 "$BIN/attnscope" run --quiet --preset fa2-tokens16k --seq "${FA3_SEQ:-2048,8192}" \
  --head-dim "${FA3_D:-64,128,256}" --causal 0,1 --dtype "$dtypes" \
  --kernels "${FA3_KERNELS:-fa3.wgmma,cudnn.sdpa,fa2.mma}" --baseline cudnn.sdpa --metrics none \
  --max-time-s "${FA3_MAX_TIME_S:-0.5}" --out "$OUT/tokens16k" --force > "$OUT/tokens16k.log" 2>&1
echo "tokens16k rc=$?"
python3 - "$OUT/tokens16k/results.jsonl" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "kernel" not in r:
        continue
    p = r["problem"]
    key = (p["dtype"], p["head_dim"], int(p.get("causal", False)), p["seq_q"])
    err = (r.get("correctness") or {}).get("rel_l2")
    val = f'{r.get("tflops", 0):.1f} ({err:.2e})' if r["status"] == "ok" else r["status"]
    rows.setdefault(key, {})[r.get("variant") or r["kernel"]] = val
kernels = sorted({k for v in rows.values() for k in v})
print("dtype D causal S | " + " | ".join(kernels) + "   [TFLOPS (rel_l2)]")
for key in sorted(rows):
    print(*key, "|", " | ".join(rows[key].get(k, "-") for k in kernels))
PY
