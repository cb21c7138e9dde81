#!/usr/bin/env bash
# ffpa.wgmma on the device in one call: the SASS check (HGMMA in every ffpa.wgmma kernel), GPU tests
# ($WG_TESTS, a gtest filter), then B=1 H=48 S=8192 fp16 at head dims $WG_D with kernels $WG_KERNELS
# (attnscope, --metrics none) and PyTorch's memory-efficient attention ($WG_TORCH=1) in the same call.
# Binaries in $1 (attnscope, attnscope.tests.gpu).
set -uo pipefail
BIN=${1:-.device/wg}
OUT=${OUT:-/tmp/out}
export ATTNSCOPE_PRESETS=$PWD/assets/presets
LIB=/usr/lib/x86_64-linux-gnu
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
echo "== SASS: HGMMA instructions per ffpa.wgmma kernel"
cuobjdump -sass "$BIN/attnscope" 2>/dev/null |
  awk '/Function : /{f = ($0 ~ /ffpa_wgmma/) ? $NF : ""} f != "" && /HGMMA/{c[f]++} END{for (k in c) print c[k], k}'
if [ -n "${WG_TESTS:-}" ]; then
  echo "== GPU tests ($WG_TESTS)"
  timeout "${WG_TESTS_S:-240}" env LD_LIBRARY_PATH=$LIB "$BIN/attnscope.tests.gpu" --gtest_filter="$WG_TESTS" \
    > "$OUT/gpu_tests.log" 2>&1
  echo "gpu tests rc=$?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|FAILED  \]|tests? ran" "$OUT/gpu_tests.log" | tail -40
  python3 "$(dirname "$0")/ffpa_worst_checks.py" "$OUT/gpu_tests.log" 4
fi
if [ -n "${WG_D:-}" ]; then
  cat > /tmp/wg.toml <<TOML
name = "wg"
description = "ffpa.wgmma check: B=1 H=48 S=8192 fp16"
kernels = [$(echo "$WG_KERNELS" | sed 's/[^,][^,]*/"&"/g')]
baseline = "${WG_KERNELS%%,*}"
[sweep]
batch = 1
heads = 48
seq = 8192
head_dim = "$WG_D"
dtype = "fp16"
TOML
  echo "== attnscope B=1 H=48 S=8192 D=$WG_D"
  timeout "${WG_RUN_S:-300}" env LD_LIBRARY_PATH=$LIB "$BIN/attnscope" run --quiet --preset /tmp/wg.toml --metrics none \
    --max-time-s "${WG_MAX_TIME_S:-0.15}" --out /tmp/wg_run --force > "$OUT/run.log" 2>&1
  echo "run rc=$?"; tail -3 "$OUT/run.log"
  cp /tmp/wg_run/results.jsonl "$OUT/wg.jsonl" 2>/dev/null
  if [ "${WG_TORCH:-1}" = 1 ]; then
    timeout 150 env -u LD_LIBRARY_PATH python3 tools/torch_sdpa.py --preset /tmp/wg.toml --backends efficient \
      --max-time-s "${WG_MAX_TIME_S:-0.15}" --out /tmp/wg_torch --force > "$OUT/torch.log" 2>&1
    echo "torch rc=$?"; cp /tmp/wg_torch/results.jsonl "$OUT/torch.jsonl" 2>/dev/null
  fi
  python3 - "$OUT/wg.jsonl" "$OUT/torch.jsonl" <<'PY'
import json, os, sys
tab, ks = {}, []
for f in sys.argv[1:]:
    if not os.path.exists(f): continue
    for l in open(f):
        r = json.loads(l)
        if "kernel" not in r: continue
        d = r["problem"]["head_dim"]; k = r.get("variant") or r["kernel"]
        if k not in ks: ks.append(k)
        v = r.get("tflops") if r["status"] == "ok" else None
        err = (r.get("correctness") or {}).get("rel_l2")
        tab.setdefault(d, {})[k] = (v, err, r["status"])
print("D | " + " | ".join(ks) + "   [TFLOPS (rel_l2), x = / torch.efficient]")
for d in sorted(tab):
    t = tab[d]; eff = (t.get("torch.efficient") or (None,))[0]
    cells = []
    for k in ks:
        v, e, s = t.get(k, (None, None, "-"))
        if v is None: cells.append(s); continue
        c = f"{v:.1f}"
        if e is not None: c += f" ({e:.1e})"
        if eff and k != "torch.efficient": c += f" {v / eff:.2f}x"
        cells.append(c)
    print(d, "|", " | ".join(cells))
PY
fi
