#!/usr/bin/env bash
# ffpa.wgmma's cluster mode (passes sharing S through distributed shared memory) against its passes
# recomputing S and cublas.unfused, in one device call: the ffpa.wgmma GPU tests, memcheck of a cluster
# case, then B=1 H=48 S=8192 at D in $CL_D (fp16, causal 0 and 1; bf16 at $CL_BF16_D), kernels in the
# order given, a cool-down before each case (the H100 runs at its power cap: docs/PERF.md, fa3.wgmma).
#   scripts/device/ffpa_cluster.sh BIN      (BIN: attnscope, tests/attnscope.tests.gpu)
set -uo pipefail
BIN=${1:?binary folder}
HERE=$(dirname "$0")
source "$HERE/common.sh" "$BIN"
if [[ -n ${CL_TESTS-FfpaWgmma*} ]]; then
  timeout 400 "$BIN/tests/attnscope.tests.gpu" --gtest_filter="${CL_TESTS-FfpaWgmma*}" > "$OUT/gpu_tests.log" 2>&1
  echo "gpu tests rc=$?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|tests? ran" "$OUT/gpu_tests.log" | sort | uniq -c | tail -20
  python3 "$HERE/ffpa_worst_checks.py" "$OUT/gpu_tests.log" 3
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 7 "$ATTNSCOPE_BIN" run --in-process \
    --kernels ffpa.wgmma.acc_f32@cluster=2,ffpa.wgmma.acc_f16@cluster=2 --batch 1 --heads 4 --heads-kv 2 --seq-q 100 --seq-kv 300 \
    --head-dim 640 --causal 1 --dtype fp16 --metrics none --max-time-s 0.01 --out "$OUT/memcheck" --force \
    > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" "$OUT/memcheck.log" | head -3; rm -rf "$OUT/memcheck"
fi
table() {
  python3 - "$1" <<'PY'
import json, sys
rows = {}
kernels = []
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "kernel" not in r: continue
    p = r["problem"]; k = r["kernel"] + "".join(f"@{n}={v}" for n, v in sorted((r.get("knobs") or {}).items()) if v)
    if k not in kernels: kernels.append(k)
    key = (p["dtype"], int(p.get("causal", False)), p["head_dim"])
    err = (r.get("correctness") or {}).get("rel_l2")
    rows.setdefault(key, {})[k] = f'{r.get("tflops", 0):.1f}' if r["status"] == "ok" else r["status"]
print("dtype causal D | " + " | ".join(kernels))
for key in sorted(rows):
    print(*key, "|", " | ".join(rows[key].get(k, "-") for k in kernels))
PY
}
K=${CL_KERNELS:-cublas.unfused,ffpa.wgmma.acc_f32@cluster=2,ffpa.wgmma.acc_f32,ffpa.wgmma.acc_f16@cluster=2,ffpa.wgmma.acc_f16}
timeout 300 "$ATTNSCOPE_BIN" run --quiet --kernels "$K" --batch 1 --heads 48 --seq 8192 --head-dim "${CL_D:-320,384,512,640,768,896,1024}" \
  --causal 0,1 --dtype fp16 --no-check --metrics none --max-time-s 0.15 --cooldown-ms "${CL_COOL_MS:-300}" \
  --out "$OUT/cl_fp16" --force > "$OUT/cl_fp16.log" 2>&1
echo "fp16 run rc=$?"
[[ -n ${CL_BF16_D-512,1024} ]] && timeout 120 "$ATTNSCOPE_BIN" run --quiet \
  --kernels cublas.unfused,ffpa.wgmma.acc_f32@cluster=2,ffpa.wgmma.acc_f32 --batch 1 --heads 48 --seq 8192 \
  --head-dim "${CL_BF16_D-512,1024}" --causal 0,1 --dtype bf16 --no-check --metrics none --max-time-s 0.15 \
  --cooldown-ms "${CL_COOL_MS:-300}" --out "$OUT/cl_bf16" --force > "$OUT/cl_bf16.log" 2>&1
echo "bf16 run rc=$?"
table "$OUT/cl_fp16/results.jsonl"
[[ -f $OUT/cl_bf16/results.jsonl ]] && table "$OUT/cl_bf16/results.jsonl"
