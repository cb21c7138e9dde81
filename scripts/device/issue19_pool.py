#!/usr/bin/env python3
"""Issue 19: pools the rounds of several scripts/device/issue19_interleaved.py runs (their OUT.json files,
same protocol) and prints, per (backend, shape), the median over every round of the paired ratio
attnscope / anchors.py, how many pairs lie within 3%, and per backend the count.

  python3 scripts/device/issue19_pool.py RUN1.json [RUN2.json ...]

More rounds make each shape's median steadier than any one run's (docs/VALIDATION.md, "each measurement
after 300 ms of its own load": 13 rounds from three runs)."""
import json
import statistics
import sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
pooled = {}
passes = set()
for path in sys.argv[1:]:
    for r in json.load(open(path)):
        key = (r["impl"], r["s"], r["d"], r["causal"])
        passes.add(r.get("pass", "fwd"))  # runs before the backward option wrote no pass: forward
        if len(passes) > 1:
            sys.exit(f"{path}: forward and backward rounds given together; pool one pass at a time")
        ours, theirs = r["ours_ms"], r["anchors_ms"]
        if len(ours) != len(theirs):
            sys.exit(f"{path}: {key} has {len(ours)} attnscope rounds and {len(theirs)} anchors.py rounds")
        pooled.setdefault(key, []).extend(a / b for a, b in zip(ours, theirs))

print("backend S D causal | rounds | median paired ratio")
per_backend = {}
medians = []
for key in sorted(pooled):
    m = statistics.median(pooled[key])
    medians.append(m)
    ok = abs(m - 1) <= 0.03
    hits, total = per_backend.get(key[0], (0, 0))
    per_backend[key[0]] = (hits + ok, total + 1)
    print(f"{key[0]} {key[1]} {key[2]} {key[3]} | {len(pooled[key])} | {m:.3f}{'' if ok else '  (outside 3%)'}")
within = sum(abs(m - 1) <= 0.03 for m in medians)
print(f"{within} of {len(medians)} within 3%; median {statistics.median(medians):.3f}, "
      f"range {min(medians):.3f}-{max(medians):.3f}")
print("; ".join(f"torch.{b}: {h} of {t}" for b, (h, t) in sorted(per_backend.items())))
