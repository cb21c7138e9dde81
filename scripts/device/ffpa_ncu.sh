#!/usr/bin/env bash
# ncu stall/pipe/shared-memory breakdown of ffpa.l1 and fa2.mma cases, one kernel launch each, for
# docs/PERF.md. Binaries in $1; cases in $NCU_CASES ("kernel-variant B H S D causal;..."; the kernel
# torch.flash profiles PyTorch's FlashAttention-2 through scripts/device/torch_sdpa_case.py); output
# in $OUT/ncu_<n>.txt. ncu's --clock-control/--cache-control none as everywhere else.
set -uo pipefail
BIN=${1:-.device/ffpa}
OUT=${OUT:-/tmp/out}
export ATTNSCOPE_PRESETS=$PWD/assets/presets
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
METRICS=${NCU_METRICS:-gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_tensor_op_hmma.sum,smsp__inst_executed.sum,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__block_size,launch__grid_size,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_misc_per_issue_active.ratio,smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio}
# One launch of the matching kernel (into $OUT/ncu_$n.txt): PyTorch's flash kernel after its warm-up,
# or ours after one sample.
profile() {
  timeout ${NCU_TIMEOUT_S:-90} ncu --clock-control none --cache-control none --metrics $METRICS --page details \
    --launch-count 1 "$@" > $OUT/ncu_$n.txt 2>&1
}
n=0
IFS=';' read -ra cases <<< "${NCU_CASES:-ffpa.l1.acc_f16@q_resident=1 1 48 8192 512 0}"
for c in "${cases[@]}"; do
  read -r kern B H S D causal <<< "$c"
  n=$((n + 1))
  echo "== ncu $n: $kern B=$B H=$H S=$S D=$D causal=$causal"
  if [ "$kern" = torch.flash ]; then
    profile -k regex:'flash_fwd' --launch-skip 5 python3 scripts/device/torch_sdpa_case.py $B $H $S $D fp16 $causal
  else
    profile -k regex:'ffpa|fa2' --launch-skip 1 \
      $PWD/$BIN/attnscope run --in-process --kernels "$kern" --batch $B --heads $H --seq $S --head-dim $D \
      --dtype fp16 --causal $causal --no-check --metrics none --warmup-ms 0 --min-samples 2 --max-samples 2 \
      --out /tmp/ncu_run_$n --force
  fi
  echo "rc=$?"
  grep -E "__|ffpa_fwd|fa2_fwd|flash_fwd" $OUT/ncu_$n.txt | sed -e 's/smsp__average_warps_issue_stalled_/stall_/' -e 's/_per_issue_active.ratio//' | awk '$NF != "0" && $NF != "0.00"' | head -40
done
