#!/usr/bin/env bash
# How many bytes a clock an SM takes in (L2 -> SM, TMA included) while real kernels run, beside the
# 21-23 bytes a clock the tma_intake microbenchmark reached (docs/PERF.md "TMA intake of an SM"): a
# dense cuBLAS GEMM (torch.matmul, 8192^3 fp16), fa3.wgmma at D 128 and 256, cublas.unfused and
# ffpa.wgmma at large D. One launch each under ncu; prints per case the kernel time, the bytes into the
# SMs, bytes a clock an SM, the tensor pipe's share of elapsed cycles and the SM clock.
# Usage: scripts/device/intake_ncu.sh BIN   (BIN holds attnscope; output under $OUT/intake_*.csv)
set -uo pipefail
source "$(dirname "$0")/common.sh" "${1:-build}"
METRICS=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_tensor_op_gmma.sum
SMS=$(nvidia-smi --query-gpu=multiprocessor_count --format=csv,noheader 2>/dev/null || echo 132)
case "$SMS" in '' | *[!0-9]*) SMS=132 ;; esac

summarise() {  # $1 = ncu csv, $2 = label
  python3 - "$1" "$2" "$SMS" <<'PY'
import csv, sys
path, label, sms = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [r for r in csv.reader(l for l in open(path) if l.startswith('"'))]
if len(rows) < 2:
    print(f"{label}: no ncu rows ({path})"); sys.exit()
head, vals = rows[0], {}
for r in rows[1:]:
    if len(r) == len(head):
        d = dict(zip(head, r)); vals[d["Metric Name"]] = (float(d["Metric Value"].replace(",", "")), d["Metric Unit"])
def si(name):
    v, u = vals.get(name, (0.0, ""))
    return v * {"Gbyte": 1e9, "Mbyte": 1e6, "Kbyte": 1e3, "Tbyte": 1e12, "byte": 1.0, "msecond": 1e-3,
                "usecond": 1e-6, "nsecond": 1e-9, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "Ghz": 1e9, "Mhz": 1e6, "hz": 1.0, "cycle/second": 1.0,
                "cycle/nsecond": 1e9, "cycle/usecond": 1e6}.get(u, 1.0)
t, cyc, hz = si("gpu__time_duration.sum"), si("sm__cycles_elapsed.avg"), si("sm__cycles_elapsed.avg.per_second")
into, l2 = si("l1tex__m_xbar2l1tex_read_bytes.sum"), si("lts__t_bytes.sum")
tensor = vals.get("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed", (0, ""))[0]
print(f"{label}: {t * 1e6:.0f} us, into SMs {into / 1e9:.2f} GB ({into / max(t, 1e-12) / 1e12:.2f} TB/s), "
      f"{into / max(cyc * sms, 1):.1f} B/clk an SM, L2 {l2 / 1e9:.2f} GB, tensor {tensor:.1f}% of elapsed, "
      f"SM {hz / 1e6:.0f} MHz")
PY
}

profile() {  # $1 = label, $2 = kernel regex, $3 = launches to skip, rest = command
  local label=$1 regex=$2 skip=$3
  shift 3
  timeout 120 ncu --clock-control none --cache-control none --csv --metrics "$METRICS" \
    -k "regex:$regex" --launch-skip "$skip" --launch-count 1 "$@" > "$OUT/intake_$label.csv" 2>&1
  summarise "$OUT/intake_$label.csv" "$label"
}

(
  unset LD_LIBRARY_PATH
  profile gemm_8192 'gemm|nvjet|sm90|cutlass' 3 python3 -c "
import torch
a, b = (torch.randn(8192, 8192, device='cuda', dtype=torch.half) for _ in range(2))
for _ in range(6): c = a @ b
torch.cuda.synchronize()"
)
ours() {  # label regex kernel B H S D
  profile "$1" "$2" 1 "$BIN/attnscope" run --in-process --kernels "$3" --batch "$4" --heads "$5" --seq "$6" \
    --head-dim "$7" --dtype fp16 --causal 0 --no-check --metrics none --warmup-ms 0 --min-samples 2 \
    --max-samples 2 --out "/tmp/intake_run_$1" --force
}
ours fa3_d256 fa3 fa3.wgmma 2 8 8192 256
ours fa3_d128 fa3 fa3.wgmma 2 16 8192 128
ours ffpa_f16_d1024 ffpa ffpa.wgmma.acc_f16 1 16 8192 1024
ours cublas_d1024 'gemm|nvjet|sm90|cutlass' cublas.unfused 1 16 8192 1024
