#!/usr/bin/env python3
"""Issue 19's check: the torch.* adapters through attnscope against the same PyTorch backends timed by
../shared/tools/anchors.py, over several alternating rounds of one device call. Each side's time per
shape is the median over its rounds (the anchors alone move up to 14% between two rounds on short
cases), and the table gives ours / anchor per shape and backend.
  compare_python_door.py --results R1.jsonl R2.jsonl ... --anchors A1.json A2.json ..."""
import argparse
import json
import statistics

ap = argparse.ArgumentParser()
ap.add_argument("--results", nargs="+", required=True)
ap.add_argument("--anchors", nargs="+", required=True)
a = ap.parse_args()

ours = {}
for path in a.results:
    for line in open(path):
        r = json.loads(line)
        if r.get("record") != "case" or not r["kernel"].startswith("torch.") or not r.get("timing"):
            continue
        p = r["problem"]
        key = (r["kernel"][len("torch."):], p["seq_q"], p["head_dim"], int(p["causal"]))
        ours.setdefault(key, []).append(r["timing"]["median_ms"])
theirs = {}
for path in a.anchors:
    for row in json.load(open(path)):
        if "ms" in row:
            theirs.setdefault((row["impl"], row["S"], row["D"], row["causal"]), []).append(row["ms"])

print(f"rounds: {len(a.results)} attnscope, {len(a.anchors)} anchors")
print("| backend | S | D | causal | attnscope ms (rounds) | anchors ms (rounds) | ours / anchor |")
print("| --- | ---: | ---: | ---: | --- | --- | ---: |")
ratios = []
for key in sorted(ours, key=lambda k: (k[0], k[3], k[2], k[1])):
    if key not in theirs:
        continue
    o, t = statistics.median(ours[key]), statistics.median(theirs[key])
    ratios.append((o / t, key))
    fmt = lambda xs: "/".join(f"{x:.3f}" for x in xs)  # noqa: E731
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {o:.3f} ({fmt(ours[key])}) | {t:.3f} ({fmt(theirs[key])}) "
          f"| {o / t:.3f} |")
def summary(label, rs):
    within = sum(1 for r in rs if abs(r - 1) <= 0.03)
    print(f"{label}: within 3%: {within} of {len(rs)}; ratio range {min(rs):.3f} .. {max(rs):.3f}; "
          f"median {statistics.median(rs):.3f}")


if ratios:
    print()
    summary("medians of the rounds", [r for r, _ in ratios])
    # The best round of each side: the clock-state modes both sides hop between drop out.
    summary("best of the rounds", [min(ours[k]) / min(theirs[k]) for _, k in ratios])
