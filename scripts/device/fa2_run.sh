#!/usr/bin/env bash
# fa2.mma on the device in one call: GPU tests (filter $FA2_TESTS), the fa2-tokens16k preset with
# cudnn.sdpa and cublas.unfused in the same run, PyTorch's FA2 on chosen shapes ($FA2_TORCH, "B H S D
# causal;..."), and ncu tensor-pipe/occupancy of fa2.mma at B=2 H=16 S=8192 D=128. Binaries in $1.
set -uo pipefail
BIN=${1:-.device/fa2}
OUT=${OUT:-/tmp/out}
export ATTNSCOPE_BIN=$PWD/$BIN/attnscope ATTNSCOPE_PRESETS=$PWD/assets/presets
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
if [ -n "${FA2_TESTS:-}" ]; then
  echo "== GPU tests ($FA2_TESTS)"
  timeout ${FA2_TESTS_S:-170} $BIN/attnscope.tests.gpu --gtest_filter="$FA2_TESTS" > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
  grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests? ran" $OUT/gpu_tests.log | tail -25
  grep "\[fa2.tiles\]" $OUT/gpu_tests.log
  python3 - "$OUT/gpu_tests.log" <<'PY'
import re, sys
rows = [l for l in open(sys.argv[1]) if l.startswith("[fa2.mma]")]
pat = re.compile(r"\[fa2.mma\] (\S+) .*rel_l2 (\S+), cudnn (\S+), tol (\S+) \((.*?)\), LSE max abs (\S+)")
worst, ratios = [], []
for l in rows:
    m = pat.search(l)
    if not m: continue
    name, e, c, t, rule, lse = m.groups(); e, c, t = float(e), float(c), float(t)
    worst.append((e / t, name, e, c, t, rule))
    if c == c and c > 0: ratios.append((e / c, name))
worst.sort(reverse=True)
print(f"{len(rows)} fa2.mma checks; worst rel_l2/tol:")
for w in worst[:5]: print("  %.3f %s rel_l2 %.2e cudnn %.2e tol %.2e (%s)" % w)
if ratios:
    ratios.sort(reverse=True)
    print("fa2/cudnn error ratio: max %.2f (%s), median %.2f, cases with cudnn %d" % (ratios[0][0], ratios[0][1], ratios[len(ratios)//2][0], len(ratios)))
PY
fi
if [ "${FA2_PRESET:-1}" = 1 ]; then
  echo "== fa2-tokens16k"
  timeout ${FA2_PRESET_S:-300} $ATTNSCOPE_BIN run --preset fa2-tokens16k --kernels fa2.mma,cudnn.sdpa,cublas.unfused --baseline cudnn.sdpa \
    ${FA2_RUN_FLAGS:-} --out /tmp/tokens16k --force > $OUT/tokens16k.log 2>&1; echo "preset rc=$?"; cp /tmp/tokens16k/results.jsonl $OUT/tokens16k.jsonl
  python3 - "$OUT/tokens16k.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])][1:]
tab = {}
for r in recs:
    p = r["problem"]; key = (p["head_dim"], p.get("causal", False), p["seq_q"])
    v = f'{r.get("tflops", 0):.0f}' if r["status"] == "ok" else r["status"]
    if r["kernel"] == "fa2.mma" and r["status"] == "ok":
        v += f' ({r["correctness"]["rel_l2"]:.1e})'
    tab.setdefault(key, {})[r["kernel"]] = v
print("D causal S: fa2.mma (rel_l2) | cudnn.sdpa | cublas.unfused  [TFLOPS]")
for k in sorted(tab):
    t = tab[k]; print(k, t.get("fa2.mma"), "|", t.get("cudnn.sdpa"), "|", t.get("cublas.unfused"))
PY
fi
if [ -n "${FA2_DTYPES:-}" ]; then
  # fa2.mma and cudnn.sdpa only (no cublas.unfused), S >= 2048, per dtype in one call: bf16 vs fp16.
  for dt in $FA2_DTYPES; do
    echo "== fa2-tokens16k S>=2048, $dt, fa2.mma + cudnn.sdpa"
    timeout 150 $ATTNSCOPE_BIN run --preset fa2-tokens16k --kernels fa2.mma,cudnn.sdpa --baseline cudnn.sdpa --seq 2048:16384:x2 \
      --dtype $dt --max-time-s 0.15 --quiet --out /tmp/dt_$dt --force > $OUT/dt_$dt.log 2>&1; echo "rc=$?"
    cp /tmp/dt_$dt/results.jsonl $OUT/dt_$dt.jsonl
    python3 - "$OUT/dt_$dt.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])][1:]
tab = {}
for r in recs:
    p = r["problem"]; v = f'{r["tflops"]:.0f}' if r["status"] == "ok" else r["status"]
    tab.setdefault((p["head_dim"], p.get("causal", False), p["seq_q"]), {})[r["kernel"]] = v
for k in sorted(tab): print(k, tab[k].get("fa2.mma"), "|", tab[k].get("cudnn.sdpa"))
PY
  done
fi
if [ -n "${FA2_TORCH:-}" ]; then
  echo "== torch FA2 (same call)"
  IFS=';' read -ra shapes <<< "$FA2_TORCH"
  for s in "${shapes[@]}"; do set -- $s; python3 scripts/device/torch_sdpa_case.py $1 $2 $3 $4 fp16 $5 2>&1 | grep flash; done
fi
if [ -n "${FA2_NCU:-}" ]; then
  echo "== ncu fa2.mma 2x16x8192x128 fp16 ${FA2_NCU}"
  c=0; [ "$FA2_NCU" = causal ] && c=1
  timeout 60 ncu --clock-control none --cache-control none --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.avg.per_cycle_active \
    -k regex:fa2 --launch-count 3 $ATTNSCOPE_BIN run --kernels fa2.mma --batch 2 --heads 16 --seq 8192 --head-dim 128 --dtype fp16 $([ $c = 1 ] && echo --causal 1) --no-check --warmup-ms 0 --min-samples 3 --max-samples 3 --out /tmp/ncu_run --force > $OUT/ncu.txt 2>&1
  echo "ncu rc=$?"; grep -E "fa2_fwd|hmma|warps_active|duration|lsu|bank|inst_executed" $OUT/ncu.txt | head -24
fi
