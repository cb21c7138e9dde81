#!/usr/bin/env python3
"""Issue 25: the metrics of two runs of the same sweep, case by case (same case ids): for each
metric the largest and the median relative difference, so a change to how metrics are collected
can be checked against the old way, and the ratio of the timed medians. Exact counts (tensor
FLOPs) must agree exactly.
    compare_metrics.py OLD_OUT_DIR NEW_OUT_DIR"""
import json
import statistics
import sys


def load(d):
    recs = [json.loads(l) for l in list(open(d + "/results.jsonl"))[1:]]
    return {r["case_id"]: r for r in recs if r.get("status") == "ok"}


old, new = load(sys.argv[1]), load(sys.argv[2])
common = sorted(set(old) & set(new))
print(f"cases: old {len(old)} ok, new {len(new)} ok, common {len(common)}")
diffs = {}
missing = 0
for cid in common:
    a = old[cid].get("metrics") or {}
    b = new[cid].get("metrics") or {}
    if not b:
        missing += 1
    for k, va in a.items():
        vb = b.get(k)
        if k in ("wall_s", "passes") or not isinstance(va, (int, float)) or not isinstance(vb, (int, float)):
            continue
        rel = abs(vb - va) / max(abs(va), 1e-12)
        diffs.setdefault(k, []).append((rel, cid))
print(f"cases without metrics in the new run: {missing}")
# The timed samples must not notice the profiler left enabled between cases.
ratios = sorted(new[c]["timing"]["median_ms"] / old[c]["timing"]["median_ms"] for c in common)
print(f"  median time new/old: median {statistics.median(ratios):.3f}, range {ratios[0]:.3f}-{ratios[-1]:.3f}")
for k, v in sorted(diffs.items()):
    worst = max(v)
    print(f"  {k:24s} median {statistics.median(r for r, _ in v):.2%}  max {worst[0]:.2%} ({old[worst[1]]['kernel']} {worst[1]})")
