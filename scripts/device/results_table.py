#!/usr/bin/env python3
"""Prints an attnscope results.jsonl as one row per (causal, D): each kernel's TFLOPS with the mean SM
clock it was timed at in brackets, then each kernel's TFLOPS over the first kernel's (list the baseline
first). A case that is not `ok` shows its status.

  python3 scripts/device/results_table.py RESULTS.jsonl"""
import json
import sys

if len(sys.argv) != 2:
    sys.exit(__doc__)
rows, names = {}, []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "kernel" not in r:  # the run's header line
        continue
    p = r["problem"]
    name = r.get("variant") or r["kernel"]
    if name not in names:
        names.append(name)
    clock = (r.get("clocks") or {}).get("sm_mhz", 0)
    value = (r.get("tflops", 0.0), clock) if r["status"] == "ok" else (r["status"], 0)
    rows.setdefault((int(p.get("causal", False)), p["head_dim"]), {})[name] = value


def cell(x):
    return f"{x[0]:.1f} ({x[1]:.0f})" if isinstance(x[0], float) else str(x[0])


def ratio(a, b):
    ok = isinstance(a[0], float) and isinstance(b[0], float) and b[0]
    return f"{a[0] / b[0]:.3f}" if ok else "-"


print("causal D | " + " | ".join(names) + " | " + " | ".join(n + "/" + names[0] for n in names[1:]))
for key in sorted(rows):
    v = [rows[key].get(n, ("-", 0)) for n in names]
    print(*key, "| " + " | ".join(cell(x) for x in v) + " | " + " | ".join(ratio(x, v[0]) for x in v[1:]))
