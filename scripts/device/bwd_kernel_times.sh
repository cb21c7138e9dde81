#!/usr/bin/env bash
# Where a backward pass's time goes, kernel by kernel: ncu's gpu__time_duration of each kernel that
# one fa2.mma backward launches (row sums, key blocks, dQ conversion) and of PyTorch's FA2 backward
# (dot(dO, O), the main kernel, dQ conversion), tokens16k shapes (B 16384 / S, H 2048 / D), fp16, full
# mask. The memset of dQ's accumulator is not a kernel; ncu does not see it.
#   (BWD_KT_FA2=0: ours only)
#   BWD_KT_D="64 128 256" BWD_KT_S=2048 scripts/device/bwd_kernel_times.sh dev-carry/new
set -uo pipefail
source "$(dirname "$0")/common.sh"
for d in ${BWD_KT_D:-64 128 256}; do
  for s in ${BWD_KT_S:-2048}; do
    b=$((16384 / s)); h=$((2048 / d))
    timeout 120 ncu --metrics gpu__time_duration.sum --kernel-name regex:"row_sums|key_block|dq_convert" \
      --launch-count 3 --csv "$ATTNSCOPE_BIN" run --in-process --kernels fa2.mma --batch $b --heads $h --seq $s \
      --head-dim $d --causal 0 --pass bwd --metrics none --no-check --warmup-ms 0 --max-time-s 0.01 \
      --out "$OUT/kt_ours" --force > "$OUT/kt_ours.csv" 2>&1
    cat > /tmp/kt_fa2.py <<PY
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v = (torch.randn($b, $h, $s, $d, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3))
with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
    o = F.scaled_dot_product_attention(q, k, v)
    o.backward(torch.randn_like(o))
torch.cuda.synchronize()
PY
    [[ ${BWD_KT_FA2:-1} == 1 ]] && ( unset LD_LIBRARY_PATH; timeout 120 ncu --metrics gpu__time_duration.sum --kernel-name regex:flash_bwd \
      --launch-count 3 --csv python3 /tmp/kt_fa2.py > "$OUT/kt_fa2.csv" 2>&1 )
    whos=(ours); [[ ${BWD_KT_FA2:-1} == 1 ]] && whos+=(fa2)
    for who in "${whos[@]}"; do
      python3 - "$OUT/kt_$who.csv" "D$d S$s $who" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows:
    print(sys.argv[2], "no ncu rows"); sys.exit()
head = rows[0]; k = head.index("Kernel Name"); v = head.index("Metric Value"); u = head.index("Metric Unit")
parts = [(r[k].split("(")[0].split("<")[0].split("::")[-1][:28], float(r[v].replace(",", "")), r[u]) for r in rows[1:]]
print(sys.argv[2], " | ".join(f"{n} {x:.1f} {unit}" for n, x, unit in parts))
PY
    done
  done
done
rm -rf "$OUT/kt_ours" "$OUT"/kt_*.csv
