"""The table of scripts/device/fa3_rounds.sh: one row a case (dtype, D, causal, S), one column a
binary and kernel with its TFLOPS a round ("/"-separated, in round order), and the same-run cudnn.sdpa's
range. --kernel takes a comma-separated list (e.g. "fa3.wgmma,fa3.wgmma@q_buffers=2"): a column each
that some binary ran.

Usage: rounds_table.py [--kernel ID] OUT/rounds_<binary>_<round>...
"""

import argparse
import collections
import json
import os


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", default="fa3.wgmma", help="the kernels (comma-separated) whose TFLOPS fill the columns")
    ap.add_argument("runs", nargs="+", help="run folders named rounds_<binary>_<round>")
    args = ap.parse_args()
    vals = collections.defaultdict(lambda: collections.defaultdict(list))
    binaries = []
    for run in args.runs:
        name = os.path.basename(run.rstrip("/"))
        prefix, _, rnd = name.rpartition("_")
        binary = prefix.removeprefix("rounds_")
        if not rnd.isdigit() or binary == prefix:
            raise SystemExit(f"rounds_table.py: {run!r} is not named rounds_<binary>_<round>")
        if binary not in binaries:
            binaries.append(binary)
        path = os.path.join(run, "results.jsonl")
        if not os.path.exists(path):
            print(f"({binary} round {rnd}: no results.jsonl)")
            continue
        with open(path) as f:
            for line in list(f)[1:]:  # the first line is the run's header
                r = json.loads(line)
                if r["status"] != "ok":
                    continue
                p = r["problem"]
                key = (p["dtype"], p["head_dim"], int(p.get("causal", False)), p["seq_q"])
                vals[key][(binary, r.get("variant") or r["kernel"])].append(r.get("tflops", 0.0))
    kernels = args.kernel.split(",")
    columns = [(b, k) for b in binaries for k in kernels if any((b, k) in v for v in vals.values())]
    names = [b if len(kernels) == 1 else f"{b} {k}" for b, k in columns]
    print("dtype D causal S | " + " | ".join(names) + " | cudnn.sdpa (every run)")
    for key in sorted(vals):
        v = vals[key]
        cells = ["/".join(f"{x:.0f}" for x in v.get(c, [])) or "-" for c in columns]
        cudnn = [x for b in binaries for x in v.get((b, "cudnn.sdpa"), [])]
        ref = f"{min(cudnn):.0f}-{max(cudnn):.0f}" if cudnn else "-"
        print(*key, "| " + " | ".join(cells) + f" | {ref}")


if __name__ == "__main__":
    main()
