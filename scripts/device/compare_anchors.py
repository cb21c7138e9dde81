#!/usr/bin/env python3
"""attnscope's cases beside ../shared/tools/anchors.py rows of the same call: one line per (pass, S, D,
causal) with attnscope's kernel, an anchor backend (IMPL, default cudnn) and PyTorch's flash backend, and
the time ratio ours / anchor.
  compare_anchors.py RESULTS.jsonl ANCHORS.json [KERNEL [IMPL]]"""
import json
import sys

results, anchors = sys.argv[1], sys.argv[2]
kernel = sys.argv[3] if len(sys.argv) > 3 else "cudnn.sdpa"
impl = sys.argv[4] if len(sys.argv) > 4 else "cudnn"
ours = {}
for line in open(results):
    r = json.loads(line)
    if r.get("record") != "case" or r["kernel"] != kernel or not r.get("timing"):
        continue
    p = r["problem"]
    ours[(p.get("pass", "fwd"), p["seq_q"], p["head_dim"], int(p["causal"]))] = (r["timing"]["median_ms"], r["tflops"])
torch = {(a["impl"], a["pass_"], a["S"], a["D"], a["causal"]): (a["ms"], a["tflops"]) for a in json.load(open(anchors))}
print(f"| pass | S | D | causal | {kernel} ms | TFLOPS | anchor {impl} ms | TFLOPS | ours/anchor time | torch flash TFLOPS |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for (ps, s, d, c), (ms, tf) in sorted(ours.items(), key=lambda x: (x[0][3], x[0][2], x[0][1], x[0][0])):
    t, f = torch.get((impl, ps, s, d, c)), torch.get(("flash", ps, s, d, c))
    if not t:
        continue
    print(f"| {ps} | {s} | {d} | {c} | {ms:.3f} | {tf:.1f} | {t[0]:.3f} | {t[1]:.1f} | {ms / t[0]:.3f} | "
          f"{f[1]:.1f} |" if f else "")
