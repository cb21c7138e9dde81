#!/usr/bin/env bash
# One device call for cudnn.sdpa's backward (issue 20): the backward conformance matrix, cudnn.sdpa's
# forward conformance (its graph builder moved), then the tokens16k table through attnscope (warm L2,
# as PyTorch users time) beside PyTorch's flash and cuDNN backward in the same call.
#   scripts/device/issue20_cudnn.sh dev-carry/new
set -uo pipefail
source "$(dirname "$0")/common.sh"
run_conformance "${FILTER:-Registry/BackwardConformance.*:Registry/Conformance.EveryCaseIsCorrectOrRefused/cudnn_sdpa}" \
  "${SUITE_S:-300}"
T0=$(date +%s)
"$ATTNSCOPE_BIN" run --kernels cudnn.sdpa --tokens 16384 --hidden 2048 --seq 2048,8192 --head-dim 64,128,256 \
  --causal 0,1 --pass fwd,bwd,fwd+bwd --l2 warm --out "$OUT/tokens16k" --force > "$OUT/tokens16k.log" 2>&1
echo "tokens16k rc=$? t=$(( $(date +%s) - T0 ))s"
grep -vE "^\[[0-9]+/[0-9]+\]" "$OUT/tokens16k.log" | tail -45
python3 "${ANCHORS:-../shared/tools/anchors.py}" --pass fwd,bwd --impl flash,cudnn --json "$OUT/anchors.json" 2>&1 | tail -30
python3 - "$OUT/tokens16k/results.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("record") != "case": continue
    p = r["problem"]; g = r.get("grad_check", {}); m = r.get("metrics") or {}
    print(p.get("pass", "fwd"), "S", p["seq_q"], "D", p["head_dim"], "causal", int(p["causal"]), r["status"],
          "ms %.4f" % r["timing"]["median_ms"] if r.get("timing") else "-",
          "TFLOPS %.1f" % r["tflops"] if r.get("tflops") else "-",
          {k: "%.2e/%.2e" % (v["rel_l2"], v["tol"]) for k, v in g.items()},
          "tensor_pipe", m.get("tensor_pipe_pct"), [l["name"][:50] for l in r.get("launch", [])], r.get("reason", "")[:80])
PY
