#!/usr/bin/env bash
# Issue 25: cupti_concurrency (scripts/device/cupti_concurrency.cu) on one GPU, on two from one
# process (a thread a GPU) and on two from two processes, with attnscope's default metrics (11
# passes) and one single-pass metric, a session a collection (fresh) or one kept open (keep).
# PROBE: the probe binary (SESSION_RANGES=N: its sessions' image size, cupti_session_size.sh). Built here with
#   nvcc -std=c++20 -O2 -I. -gencode=arch=compute_90a,code=sm_90a -c scripts/device/cupti_concurrency.cu -o probe.o
#   g++ -o cupti_probe probe.o -Wl,--start-group build/reports/*.a build/profiling/*.a build/kernels/*.a \
#     -Wl,--end-group (the cuBLAS, cuDNN and static cudart libraries of attnscope's link line)
set -uo pipefail
PROBE=${PROBE:-dev-carry/probe/cupti_probe}
CASES=${CASES:-12}
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
DEFAULT=sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.pct_of_peak_sustained_elapsed,sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed,sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum.pct_of_peak_sustained_elapsed,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed,sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed
ONE=gpu__time_duration.sum
date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
for replay in ${REPLAYS:-kernel user}; do
  for set in ${SETS:-DEFAULT ONE}; do
    for session in ${SESSIONS:-fresh keep}; do
      names=${!set}
      echo "== $set, $replay replay, $session: one GPU"; $PROBE 0 $CASES $replay $session $names
      echo "== $set, $replay replay, $session: two GPUs, one process"; $PROBE 0,1 $CASES $replay $session $names
      echo "== $set, $replay replay, $session: two GPUs, two processes"
      $PROBE 0 $CASES $replay $session $names & $PROBE 1 $CASES $replay $session $names; wait
    done
  done
done
