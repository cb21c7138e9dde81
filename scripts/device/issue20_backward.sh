#!/usr/bin/env bash
# One device call for the backward pass (issue 20): the backward conformance matrix of every CUDA
# kernel that declares a backward, the forward conformance of the engine's other kernels (the engine
# path changed under them), and a fwd/bwd/fwd+bwd sweep through the CLI with CUPTI metrics.
#   scripts/device/issue20_backward.sh dev-carry/new
set -uo pipefail
source "$(dirname "$0")/common.sh"
run_conformance "${FILTER:-Registry/BackwardConformance.*:Registry/Conformance.EveryCaseIsCorrectOrRefused/*}" "${SUITE_S:-300}"
T0=$(date +%s)
"$ATTNSCOPE_BIN" run --kernels cuda.reference,cudnn.sdpa,fa2.mma --batch 2 --heads 8 --seq 1024,4096 \
  --head-dim 64,128 --causal 0,1 --pass fwd,bwd,fwd+bwd --max-time-s 0.3 --out "$OUT/sweep" --force \
  > "$OUT/sweep.log" 2>&1
echo "sweep rc=$? t=$(( $(date +%s) - T0 ))s"
grep -vE "^\[[0-9]+/[0-9]+\]" "$OUT/sweep.log" | tail -60
python3 - "$OUT/sweep/results.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("record") != "case" or r["kernel"] != "cuda.reference": continue
    p = r["problem"]; g = r.get("grad_check", {})
    print(p.get("pass", "fwd"), p["seq_q"], p["head_dim"], p["causal"], r["status"],
          {k: (round(v["rel_l2"], 8), v["tol"]) for k, v in g.items()},
          [l["name"][:40] for l in r.get("launch", [])], r.get("metrics_status"),
          (r.get("metrics") or {}).get("tensor_pipe_pct"))
PY
