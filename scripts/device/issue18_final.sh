#!/usr/bin/env bash
# Issue 18, last device call of the session: a kernel written from docs/plugins.md alone
# (scripts/device/outside_attn.cu) in a sweep beside cudnn.sdpa (memcheck first), then the GPU tests
# of kernel sources and isolation on this build. Binaries in dev-carry/new.
set -uo pipefail
OUT=${OUT:-/tmp/out}
B=$PWD/dev-carry/new
SRC=$PWD/scripts/device/outside_attn.cu
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu ATTNSCOPE_PRESETS=$PWD/assets/presets ATTNSCOPE_BIN=$B/attnscope
export ATTNSCOPE_CACHE_DIR=/tmp/attnscope-cache ATTNSCOPE_CUDA_EXAMPLE_PLUGIN=$B/libattnscope_example_cuda.so
export ATTNSCOPE_TEST_PLUGIN_DIR=$B
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== memcheck: outside.rowwise"
timeout 200 compute-sanitizer --tool memcheck --print-limit 5 $B/attnscope run --in-process --backend cuda \
  --kernel-source $SRC --kernels outside.rowwise --batch 1 --heads 4 --heads-kv 2 --seq-q 100 --seq-kv 333 \
  --head-dim 64,128 --causal 0,1 --window 'none;32,8' --metrics none --max-time-s 0.001 --warmup-ms 0 --quiet \
  --out $OUT/memcheck 2>&1 | grep -E "ERROR SUMMARY|Invalid" | head -5
echo "== outside.rowwise beside cudnn.sdpa"
timeout 300 $B/attnscope run --backend cuda --kernel-source $SRC --kernels outside.rowwise,cudnn.sdpa \
  --batch 2 --heads 8 --heads-kv 8,2 --seq 200,1024,4096 --head-dim 64,128 --dtype fp16,bf16 --causal 0,1 \
  --window 'none;128,0' --metrics none --quiet --report --out $OUT/outside > $OUT/outside.log 2>&1
echo "outside rc=$?"; tail -2 $OUT/outside.log
python3 - $OUT/outside/results.jsonl <<'PY'
import json, sys, collections
st = collections.Counter(); worst = 0; tf = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("record") != "case": continue
    c = r.get("correctness") or {}
    st[(r["kernel"], r["status"], c.get("pass"))] += 1
    if r["kernel"] == "outside.rowwise" and c.get("rel_l2") is not None: worst = max(worst, c["rel_l2"])
    if r["status"] == "ok": tf[r["kernel"]].append(r["tflops"])
    if r["kernel"] == "outside.rowwise" and r["status"] != "ok": print("  not ok:", r["case_id"], r["status"], r.get("reason", "")[:200])
for k, v in sorted(st.items(), key=str): print(" ", k, v)
print("  outside.rowwise worst rel_l2", worst)
for k, v in tf.items(): print(f"  {k}: TFLOPS min {min(v):.1f} median {sorted(v)[len(v)//2]:.1f} max {max(v):.1f} over {len(v)} ok cases")
PY
ls $OUT/outside/ | head
echo "== GPU tests"
timeout 300 $B/attnscope.tests.gpu --gtest_filter='KernelSourcesGpu.*:IsolationGpu.*' > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|^\[       OK|Failure" $OUT/gpu_tests.log | head -20
rm -rf $OUT/*/plan.jsonl $OUT/*/results.csv $OUT/outside/*.png $OUT/outside/*.svg
