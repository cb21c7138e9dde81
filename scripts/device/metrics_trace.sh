#!/usr/bin/env bash
# Issue 25: where the metrics phase's time goes on one GPU and on several. Runs the 60-case
# scale-out sweep (sweep_phases.sh) with ATTNSCOPE_TRACE_STAGES=1 and sums the range profiler's
# steps (metrics.enable, .setup, .reset, .pass, .decode, .evaluate, .disable, .launch_stats) per
# worker from each run's workers.log.
# BIN: the binaries' folder; RUNS as for sweep_phases.sh.
set -uo pipefail
export ATTNSCOPE_TRACE_STAGES=1
OUT=${OUT:-/tmp/out}
"$(dirname "$0")/sweep_phases.sh"
for entry in ${RUNS:-none1:--metrics,none}; do
  name=${entry%%:*}
  echo "== trace sums, $name"
  python3 - "$OUT/$name/workers.log" <<'PY'
import collections, os, re, sys
sums = collections.defaultdict(lambda: collections.Counter())
counts = collections.defaultdict(lambda: collections.Counter())
cases = collections.defaultdict(list)  # per worker: each case's steps, a case starting at launch_stats
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"\[w(\d+)\] trace: (metrics\.\w+) ([0-9.]+) ms", line)
    if not m: continue
    w, step, ms = m.group(1), m.group(2), float(m.group(3))
    sums[w][step] += ms / 1e3; counts[w][step] += 1
    if step == "metrics.launch_stats" or not cases[w]: cases[w].append([])
    cases[w][-1].append((step[8:], ms))
for w in sorted(sums):
    print(f"  w{w}: " + " ".join(f"{k[8:]}={v:.2f}s/{counts[w][k]}" for k, v in sorted(sums[w].items())))
    # The pass times (ms) of a few cases: one number per trip (kernel replay: one trip).
    every = int(os.environ.get("TRACE_CASES", "8"))
    for c in (cases[w][:: max(1, len(cases[w]) // every)] if every > 0 else []):
        passes = [ms for s, ms in c if s == "pass"]
        begin = sum(ms for s, ms in c if s == "begin_session")
        print(f"    begin {begin:.0f} passes " + " ".join(f"{p:.0f}" for p in passes))
PY
done
