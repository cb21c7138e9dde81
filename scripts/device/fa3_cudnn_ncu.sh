#!/usr/bin/env bash
# fa3.wgmma beside cudnn.sdpa under ncu, one launch each, on the fa2-tokens16k shapes where fa3 is
# behind (issue 21): what each kernel spends a FLOP on (instructions by pipe: XU is MUFU's ex2, FMA,
# ALU), how busy the tensor pipe, the XU pipe and the issue slots are, and the launch shape.
# Usage: scripts/device/fa3_cudnn_ncu.sh BIN_DIR   (BIN_DIR/attnscope; cases in $NCU_CASES,
# "B H S D causal;..."; output $OUT/ncu_<kernel>_<n>.txt and one summary line a profile)
set -uo pipefail
BIN=${1:-build}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export ATTNSCOPE_PRESETS=$PWD/assets/presets
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
pct=avg.pct_of_peak_sustained_active
METRICS=gpu__time_duration.sum,sm__cycles_elapsed.avg,smsp__inst_executed.sum,sm__inst_executed_pipe_xu.sum
METRICS+=,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_tensor_op_gmma.sum
METRICS+=,sm__pipe_tensor_op_hmma_cycles_active.$pct
METRICS+=,sm__inst_executed_pipe_xu.$pct,sm__pipe_fma_cycles_active.$pct,sm__pipe_alu_cycles_active.$pct
METRICS+=,smsp__issue_active.$pct,launch__grid_size,launch__block_size,launch__registers_per_thread
METRICS+=,launch__shared_mem_per_block_dynamic,sm__warps_active.$pct
n=0
IFS=';' read -ra cases <<< "${NCU_CASES:-8 32 2048 64 0;2 32 8192 64 0;8 32 2048 64 1;8 16 2048 128 0}"
for c in "${cases[@]}"; do
  read -r B H S D causal <<< "$c"
  n=$((n + 1))
  for kern in cudnn.sdpa fa3.wgmma; do
    f=$OUT/ncu_${kern%%.*}_$n.txt
    timeout "${NCU_TIMEOUT_S:-120}" ncu --clock-control none --cache-control none --metrics "$METRICS" \
      -k regex:'sdpa_sm90_flash_fprop|fa3_forward' --launch-skip 2 --launch-count 1 \
      "$PWD/$BIN/attnscope" run --in-process --kernels "$kern" --batch "$B" --heads "$H" --seq "$S" \
      --head-dim "$D" --dtype fp16 --causal "$causal" --no-check --metrics none --warmup-ms 0 \
      --min-samples 4 --max-samples 4 --out "/tmp/ncu_run_$n" --force > "$f" 2>&1
    echo "== $kern B=$B H=$H S=$S D=$D causal=$causal rc=$?"
    grep -E "^  [a-zA-Z_]|__" "$f" | grep -vE "^  (void|\[|==)" | head -30
  done
done
