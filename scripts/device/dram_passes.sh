#!/usr/bin/env bash
# Issue 5, configuration A (B4 Hq16 S1024 D64 bf16, working set inside L2): does the DRAM-write
# count depend on which replay pass collects it, in ncu and in CUPTI? Runs one case four ways: CUPTI
# with the default set and with the two DRAM counters only; ncu (the case's recorded command) with
# the default set and with the DRAM counters only. Binaries in $1; output in $OUT/dram_*.
set -uo pipefail
BIN=${1:-.device/ffpa}
OUT=${OUT:-/tmp/out}
export ATTNSCOPE_PRESETS=$PWD/assets/presets
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
DRAM=dram__bytes_read.sum,dram__bytes_write.sum
for kern in ${DRAM_KERNELS:-fa2.mma cudnn.sdpa}; do
  for set in default $DRAM; do
    tag=$([ $set = default ] && echo full || echo dram)
    $PWD/$BIN/attnscope run --kernels $kern --batch 4 --heads 16 --seq 1024 --head-dim 64 --dtype bf16 \
      --metrics $set --max-time-s 0.05 --quiet --out /tmp/dram_${kern}_$tag --force > $OUT/dram_run.log 2>&1
    python3 - /tmp/dram_${kern}_$tag/results.jsonl "$kern cupti $tag" <<'PY'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][-1]
m = r.get("metrics", {})
print(f"{sys.argv[2]:28s} passes {m.get('passes')} write {m.get('dram_bytes_write')} read {m.get('dram_bytes_read')} status {r.get('metrics_status')}")
PY
  done
  cmd=$(python3 -c "import json,sys; print([json.loads(l) for l in open(sys.argv[1])][-1]['ncu_command'])" /tmp/dram_${kern}_full/results.jsonl)
  for tag in full dram; do
    c="$cmd"
    [ $tag = dram ] && c=$(echo "$cmd" | sed -E "s/--metrics [^ ]+/--metrics $DRAM/")
    eval "timeout 120 $c" > $OUT/dram_ncu_${kern}_$tag.txt 2>&1
    echo "$kern ncu $tag rc=$?: $(grep -E 'dram__bytes_(read|write).sum ' $OUT/dram_ncu_${kern}_$tag.txt | awk '{print $1, $(NF-1), $NF}' | tr '\n' ' ')"
  done
done
