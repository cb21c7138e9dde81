#!/usr/bin/env bash
# One device call: cudnn.sdpa's backward with the padding-mask workaround (seq_kv not a multiple of
# 128 on cuDNN <= 9.15.0) over the backward conformance matrix, then the S 8192 D 128 backward case
# profiled by attnscope's CUPTI pass and by the ncu command its record carries (same NVTX range).
#   scripts/device/issue20_padding.sh dev-carry/new
set -uo pipefail
source "$(dirname "$0")/common.sh"
run_conformance "${FILTER:-Registry/BackwardConformance.*cudnn_sdpa}" 300
"$ATTNSCOPE_BIN" run --kernels cudnn.sdpa --batch 2 --heads 16 --seq 8192 --head-dim 128 --pass bwd --l2 warm \
  --out "$OUT/case" --force > "$OUT/case.log" 2>&1
python3 - "$OUT/case/results.jsonl" > "$OUT/ncu_cmd.sh" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("record") == "case":
        m = r.get("metrics") or {}
        print("# attnscope CUPTI: tensor_pipe_pct", m.get("tensor_pipe_pct"), "median_ms", r["timing"]["median_ms"],
              "kernels", [k.get("name", "")[:40] + " " + str(k.get("tensor_pipe_pct")) for k in m.get("kernels", [])])
        print(r["ncu_command"])
PY
head -1 "$OUT/ncu_cmd.sh"
T0=$(date +%s)
timeout 240 bash "$OUT/ncu_cmd.sh" > "$OUT/ncu.log" 2>&1
echo "ncu rc=$? t=$(( $(date +%s) - T0 ))s"
grep -E "hmma|pipe_tensor|==PROF==|Kernel|kernel" "$OUT/ncu.log" | grep -v "^$" | head -30
