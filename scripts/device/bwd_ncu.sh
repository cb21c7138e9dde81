#!/usr/bin/env bash
# ncu beside ncu: fa2.mma's backward key-block kernel and PyTorch's FA2 backward kernel on the same
# shape (fp16, B 2, H 16, S 8192, D 128 unless BWD_D/BWD_S say otherwise), one launch each, with the
# sections that tell an issue-, shared-memory- or atomics-bound kernel apart.
#   scripts/device/bwd_ncu.sh dev-carry/new   (BWD_NCU_FA2=0: ours only)
set -uo pipefail
source "$(dirname "$0")/common.sh"
D=${BWD_D:-128}; S=${BWD_S:-8192}; H=$((2048 / D)); CAUSAL=${BWD_CAUSAL:-0}
SECTIONS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
--section WarpStateStats --section LaunchStats --section Occupancy --section InstructionStats --metrics \
smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,\
sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,\
l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,\
lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,smsp__inst_executed.sum"
timeout 300 ncu $SECTIONS --kernel-name regex:key_block --launch-count 1 "$ATTNSCOPE_BIN" run --in-process \
  --kernels fa2.mma --batch 2 --heads $H --seq $S --head-dim $D --causal $CAUSAL --pass bwd --metrics none \
  --warmup-ms 0 --max-time-s 0.01 --out "$OUT/ncu_ours" --force > "$OUT/ncu_ours.txt" 2>&1
echo "ncu ours rc=$?"
cat > /tmp/fa2_bwd_once.py <<PY
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v = (torch.randn(2, $H, $S, $D, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3))
with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
    o = F.scaled_dot_product_attention(q, k, v, is_causal=bool($CAUSAL))
    o.backward(torch.randn_like(o))
torch.cuda.synchronize()
PY
[[ ${BWD_NCU_FA2:-1} == 1 ]] && ( unset LD_LIBRARY_PATH; timeout 300 ncu $SECTIONS --kernel-name regex:flash_bwd_dq_dk_dv --launch-count 1 python3 /tmp/fa2_bwd_once.py \
  > "$OUT/ncu_fa2.txt" 2>&1; echo "ncu fa2 rc=$?" )
for f in ours fa2; do
  echo "== $f"
  grep -E "^\s+(Duration|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|DRAM Throughput|Executed Ipc Active|Issue Slots Busy|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Dynamic Shared Memory Per Block|Block Size|Grid Size|Warp Cycles Per Issued Instruction|Executed Instructions|Mem Busy|Max Bandwidth|L1/TEX Hit Rate|L2 Hit Rate|smsp__average|sm__pipe|l1tex__|lts__t|smsp__inst)" "$OUT/ncu_$f.txt" | head -50
  grep -E "flash_bwd|key_block" "$OUT/ncu_$f.txt" | head -3
done
