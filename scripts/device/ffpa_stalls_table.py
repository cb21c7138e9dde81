# Summarises ncu source-page CSVs (xz) of scripts/device/ffpa_stalls.sh: per kernel the warp-stall
# samples by reason and by opcode, and the ten SASS instructions with the most samples.
# Usage: python3 scripts/device/ffpa_stalls_table.py stalls_1.csv.xz [...]
import csv, sys, lzma, collections
for path in sys.argv[1:]:
    lines = [l for l in lzma.open(path, "rt") if l.startswith('"')]
    rows = list(csv.reader(lines))
    name = rows[0][1][:110]
    head = rows[1]; data = [r for r in rows[2:] if len(r) >= len(head) - 1]
    ix = {k: i for i, k in enumerate(head)}
    num = lambda v: float((v or "0").replace(",", "") or 0)
    key = ix["Warp Stall Sampling (All Samples)"]
    reasons = [k for k in head if k.startswith("stall_") and "Not Issued" not in k]
    total = sum(num(r[key]) for r in data) or 1
    print("==", name, f"samples {total:.0f}")
    agg = collections.Counter()
    for r in data:
        for k in reasons: agg[k] += num(r[ix[k]])
    print("  by reason:", ", ".join(f"{k[6:]} {100*v/total:.1f}%" for k, v in agg.most_common(8)))
    op = collections.Counter()
    for r in data: op[r[ix["Source"]].split()[0] if r[ix["Source"]].split() else "?"] += num(r[key])
    print("  by opcode:", ", ".join(f"{k} {100*v/total:.1f}%" for k, v in op.most_common(8)))
    for r in sorted(data, key=lambda r: -num(r[key]))[:10]:
        top = sorted(((num(r[ix[k]]), k) for k in reasons), reverse=True)[:2]
        print(f"  {100*num(r[key])/total:5.1f}%  {r[ix['Source']].strip()[:70]:70s} " + ", ".join(f"{k[6:]} {100*v/total:.1f}%" for v, k in top if v))
