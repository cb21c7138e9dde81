#!/usr/bin/env bash
# Issue 18 on the device: the CUDA example plug-in and the same kernel through --kernel-source
# (NVRTC) in one sweep beside cudnn.sdpa and fa2.mma (timing pairs within 2%?), the check, CUPTI
# metrics and the recorded ncu command, memcheck of both, the GPU tests, and a plug-in that writes
# out of bounds. Binaries and plug-ins in dev-carry/new (attnscope, attnscope.tests.gpu, *.so).
set -uo pipefail
OUT=${OUT:-/tmp/out}
B=$PWD/dev-carry/new
SRC=$PWD/examples/kernel-source/tiled_attention.cu
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu ATTNSCOPE_PRESETS=$PWD/assets/presets ATTNSCOPE_BIN=$B/attnscope
export ATTNSCOPE_CACHE_DIR=/tmp/attnscope-cache ATTNSCOPE_CUDA_EXAMPLE_PLUGIN=$B/libattnscope_example_cuda.so
export ATTNSCOPE_TEST_PLUGIN_DIR=$B
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
$B/attnscope compile $SRC --head-dim 64,128 --dtype fp16,bf16
echo "== memcheck (in-process, both kernels)"
timeout 240 compute-sanitizer --tool memcheck --print-limit 5 $B/attnscope run --in-process --backend cuda \
  --plugin $ATTNSCOPE_CUDA_EXAMPLE_PLUGIN --kernel-source $SRC --kernels example.tiled_mma,example.tiled_rtc \
  --batch 1 --heads 4 --heads-kv 2 --seq 200 --seq-kv 333 --head-dim 64,128 --causal 0,1 --metrics none \
  --max-time-s 0.001 --warmup-ms 0 --quiet --out $OUT/memcheck 2>&1 | tail -4
echo "== timing pairs: plug-in vs kernel source, one run, --metrics none"
timeout 300 $B/attnscope run --backend cuda --plugin $ATTNSCOPE_CUDA_EXAMPLE_PLUGIN --kernel-source $SRC \
  --kernels example.tiled_mma,example.tiled_rtc,cudnn.sdpa,fa2.mma --batch 2 --heads 16 --seq 1024,4096,16384 \
  --head-dim 64,128 --causal 0,1 --metrics none --quiet --out $OUT/pairs > $OUT/pairs.log 2>&1
echo "pairs rc=$?"; tail -3 $OUT/pairs.log
python3 - $OUT/pairs/results.jsonl <<'PY'
import json, sys, collections
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("record") != "case": continue
    p = r["problem"]; key = (p["seq_q"], p["head_dim"], int(p["causal"]))
    t = r.get("timing") or {}
    c = r.get("correctness") or {}
    rows[key][r["kernel"]] = (r.get("tflops"), t.get("median_ms"), r["status"], c.get("rel_l2"), c.get("pass"), t.get("noise_pct"))
print("| seq | D | causal | example.tiled_mma (plug-in) | example.tiled_rtc (source) | source/plug-in time | cudnn.sdpa | fa2.mma |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
worst = 0
for key in sorted(rows):
    k = rows[key]; m = k.get("example.tiled_mma"); s = k.get("example.tiled_rtc")
    ratio = s[1] / m[1] if m and s and m[1] and s[1] else float("nan")
    worst = max(worst, abs(ratio - 1))
    f = lambda v: "-" if not v or v[0] is None else f"{v[0]:.1f}"
    print(f"| {key[0]} | {key[1]} | {key[2]} | {f(m)} | {f(s)} | {ratio:.3f} | {f(k.get('cudnn.sdpa'))} | {f(k.get('fa2.mma'))} |")
bad = [(key, kern, v[2], v[4]) for key in rows for kern, v in rows[key].items() if v[2] != "ok" or not v[4]]
print("not ok / not passed:", bad)
print("rel_l2 max tiled:", max(v[3] for key in rows for kern, v in rows[key].items() if kern.startswith("example")))
print(f"worst |source/plug-in - 1| = {worst*100:.2f}%")
PY
echo "== metrics and ncu command (default metrics)"
timeout 200 $B/attnscope run --backend cuda --plugin $ATTNSCOPE_CUDA_EXAMPLE_PLUGIN --kernel-source $SRC \
  --kernels example.tiled_mma,example.tiled_rtc --batch 2 --heads 16 --seq 4096 --head-dim 128 --causal 0 \
  --quiet --out $OUT/metrics > $OUT/metrics.log 2>&1
echo "metrics rc=$?"
python3 - $OUT/metrics/results.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("record") != "case": continue
    m = r.get("metrics") or {}
    print(r["kernel"], r["status"], "tflops", round(r.get("tflops") or 0, 1), "regs", r["launch"][0]["regs"],
          {k: round(v, 1) for k, v in m.items() if isinstance(v, (int, float))})
    print("  ncu:", r.get("ncu_command"))
PY
NCU=$(python3 -c "
import json,sys
for l in open('$OUT/metrics/results.jsonl'):
    r=json.loads(l)
    if r.get('record')=='case' and r['kernel']=='example.tiled_rtc': print(r['ncu_command'])")
if [[ -n $NCU ]]; then
  echo "== running the recorded ncu command"
  (cd /tmp && timeout 150 bash -c "$NCU --section SpeedOfLight" 2>&1 | grep -E "attn_forward|Duration|Compute \(SM\) Throughput|Memory Throughput|==ERROR|==PROF==" | head -12)
fi
echo "== GPU tests"
timeout 240 $B/attnscope.tests.gpu --gtest_filter='KernelSourcesGpu.*' > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED|  OK) |^\[  FAILED|Failure|Expected|Which is" $OUT/gpu_tests.log | head -20
rm -rf $OUT/*/plan.jsonl $OUT/*/results.csv
