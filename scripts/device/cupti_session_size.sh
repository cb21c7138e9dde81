#!/usr/bin/env bash
# Issue 25: what a range-profiler session costs against the ranges its counter image holds
# (SESSION_RANGES, read by cupti_concurrency), with attnscope's default metrics on one GPU, kept
# sessions, user then kernel replay: the probe's mean time a collection and, from the stage trace,
# each session's set-up and disable and the first passes. PROBE: the probe binary.
set -uo pipefail
PROBE=${PROBE:-dev-carry/probe/cupti_probe}
export ATTNSCOPE_TRACE_STAGES=1 LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
DEFAULT=sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.pct_of_peak_sustained_elapsed,sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed,sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum.pct_of_peak_sustained_elapsed,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed,sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed
nvidia-smi --query-gpu=name --format=csv,noheader
for replay in user kernel; do
  for R in ${RANGES:-1 4 16 64 256}; do
    SESSION_RANGES=$R $PROBE 0 12 $replay keep $DEFAULT 2> /tmp/trace.err | sed "s/^/R=$R: /"
    echo "   begin_session: $(grep begin_session /tmp/trace.err | awk '{print $3}' | tr '\n' ' ')" \
      "disable: $(grep metrics.disable /tmp/trace.err | awk '{print $3}' | tr '\n' ' ')"
    echo "   passes: $(grep metrics.pass /tmp/trace.err | head -24 | awk '{printf "%.0f ", $3}')"
  done
done
