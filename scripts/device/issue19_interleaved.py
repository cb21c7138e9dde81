#!/usr/bin/env python3
"""Issue 19: PyTorch's SDPA backends through attnscope against the same backends timed by
anchors.py, interleaved shape by shape in one process, so both tools see the same GPU state (clocks,
temperature) at each comparison.

  python3 scripts/device/issue19_interleaved.py BINDIR ANCHORS.py [ROUNDS] [OUT.json] [COOLDOWN_MS] [HEAT_MS]
      [BSHD_IMPLS]

BINDIR/python holds the attnscope module for this python3. Per round and fa2-tokens16k shape (B*S =
16384, H*D = 2048, S 2048/8192, D 64/128/256, causal 0/1, fp16): attnscope.run in this process
(--in-process, L2 warm as anchors.py times, no check, no metrics, at least 50 samples) with
torch.flash, torch.cudnn and torch.efficient, then anchors.measure for each (100 calls); the tool
that goes first alternates by round and the shape order rotates. Per (backend, shape): the median
over rounds of the per-round ratio ours / anchors, and the ratio of the two medians.

COOLDOWN_MS > 0 idles the GPU that long before every measurement on both sides (attnscope's
--cooldown-ms, a sleep before each anchors.measure), so that each starts from the same clock and
power state instead of whatever the measurement before it left: without it the cuDNN backend's
medians moved 6-15% from round to round on both sides (docs/VALIDATION.md).

HEAT_MS > 0 does the opposite: it runs the measured call itself for that long right before every
measurement on both sides (attnscope's --warmup-ms; anchors.measure repeated and discarded), so that
each is taken at the clock the GPU settles to under that load rather than during the boost a short
measurement from idle catches part of (cool-downs did not bring the per-shape spread under 3%).

BSHD_IMPLS (comma-separated, e.g. cudnn) times those backends a third way: anchors.py's own timer
(anchors.median_ms, 100 calls, the same heat) on (B, S, H, D) tensors viewed as (B, H, S, D), the
layout attnscope hands every kernel, where anchors.measure allocates (B, H, S, D) contiguous. A
backend whose speed depends on the layout then shows it as ours/anchors away from 1 but
ours/anchors-on-BSHD near it: the layout, not the timing.

ISSUE19_PASS=bwd in the environment compares the backward instead (attnscope's --pass bwd, anchors.py's
"bwd"): both time ``torch.autograd.grad`` of the forced-backend SDPA's output alone, a fresh dO made
once outside the timed calls (python/attnscope/sdpa_backward.py). The BSHD third timing is forward
only."""
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time

bindir, anchors_path = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
out_json = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] != "-" else None
cooldown_ms = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
heat_ms = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
bshd_impls = [i for i in (sys.argv[7] if len(sys.argv) > 7 else "").split(",") if i]
PASS = os.environ.get("ISSUE19_PASS", "fwd")
if PASS not in ("fwd", "bwd"):
    sys.exit(f"ISSUE19_PASS={PASS}: fwd or bwd")
if PASS == "bwd" and bshd_impls:
    sys.exit("BSHD_IMPLS: the third timing is forward only; leave it empty with ISSUE19_PASS=bwd")
sys.path.insert(0, f"{bindir}/python")
import torch  # noqa: E402  (PyTorch before attnscope's extension: its own cuDNN)

spec = importlib.util.spec_from_file_location("anchors", anchors_path)
anchors = importlib.util.module_from_spec(spec)
spec.loader.exec_module(anchors)
import attnscope  # noqa: E402

IMPLS = ("flash", "cudnn", "efficient")
SHAPES = [(s, d, c) for s in (2048, 8192) for d in (64, 128, 256) for c in (0, 1)]
ARGS = ["--in-process", "--force", "--l2", "warm", "--no-check", "--metrics", "none", "--min-samples", "50",
        "--max-time-s", "0.5", "--warmup-ms", f"{max(heat_ms, 20):g}", "--cooldown-ms", f"{cooldown_ms:g}",
        "--pass", PASS]
ours = {}
theirs = {}
theirs_bshd = {}
cache = {}
tmp = tempfile.mkdtemp(prefix="issue19-")


def measure_ours(s, d, c):
    rows = attnscope.run(kernels=[f"torch.{i}" for i in IMPLS], out=f"{tmp}/run", quiet=True, tokens=16384,
                         hidden=2048, seq=[s], head_dim=[d], causal=[c], args=ARGS)
    torch.cuda.set_stream(torch.cuda.default_stream())  # the engine's stream is gone with the run
    for r in rows:
        if r["status"] == "ok":
            ours.setdefault((r["kernel"][len("torch."):], s, d, c), []).append(r["timing.median_ms"])


def settle(heat):
    """The state anchors.py measures from, as attnscope's --cooldown-ms and --warmup-ms set its own: idle
    for COOLDOWN_MS, then `heat()` repeated for HEAT_MS."""
    if cooldown_ms > 0:
        torch.cuda.synchronize()
        time.sleep(cooldown_ms / 1000)
    heat_end = time.monotonic() + heat_ms / 1000
    while time.monotonic() < heat_end:
        heat()


def measure_theirs(s, d, c):
    for impl in IMPLS:
        settle(lambda: anchors.measure(impl, 16384 // s, 2048 // d, s, d, bool(c), torch.float16, PASS, 20, cache))
        ms, _ = anchors.measure(impl, 16384 // s, 2048 // d, s, d, bool(c), torch.float16, PASS, 100, cache)
        theirs.setdefault((impl, s, d, c), []).append(ms)
    for impl in bshd_impls:
        q, k, v = (torch.randn(16384 // s, s, 2048 // d, d, device="cuda", dtype=torch.float16).transpose(1, 2)
                   for _ in range(3))

        def fn():
            with anchors.sdpa_kernel([anchors.SDPA[impl]]):
                return anchors.F.scaled_dot_product_attention(q, k, v, is_causal=bool(c))

        settle(lambda: anchors.median_ms(fn, reps=20))
        theirs_bshd.setdefault((impl, s, d, c), []).append(anchors.median_ms(fn, reps=100))


def paired_rows():
    rows = []
    for key in sorted(theirs):
        a, b = ours.get(key, []), theirs[key]
        if len(a) != len(b):
            rows.append((key, None, None, a, b))
            continue
        paired = statistics.median(x / y for x, y in zip(a, b))
        rows.append((key, paired, statistics.median(a) / statistics.median(b), a, b))
    return rows


def save(rows):
    """OUT.json after every round, so that a run cut short keeps the rounds it finished."""
    if out_json:
        with open(out_json, "w") as f:
            json.dump([{"impl": k[0], "s": k[1], "d": k[2], "causal": k[3], "pass": PASS, "ours_ms": a,
                        "anchors_ms": b, "paired": p, "ratio_of_medians": q, "anchors_bshd_ms": theirs_bshd.get(k)}
                       for k, p, q, a, b in rows], f, indent=1)


for r in range(rounds):
    order = SHAPES[r % len(SHAPES):] + SHAPES[:r % len(SHAPES)]
    for s, d, c in order:
        first, second = (measure_ours, measure_theirs) if r % 2 == 0 else (measure_theirs, measure_ours)
        first(s, d, c)
        second(s, d, c)
    save(paired_rows())
    print(f"round {r + 1} of {rounds} done", flush=True)

rows = paired_rows()
print("backend S D causal | ours ms (median of rounds) | anchors ms | paired ratio | ratio of medians")
within = 0
for (impl, s, d, c), paired, ratio, a, b in rows:
    if paired is None:
        print(f"{impl} {s} {d} {c} | missing rounds: ours {a} anchors {b}")
        continue
    within += abs(paired - 1) <= 0.03
    print(f"{impl} {s} {d} {c} | {statistics.median(a):.4f} | {statistics.median(b):.4f} | {paired:.3f} | "
          f"{ratio:.3f}")
paired_all = [p for _, p, _, _, _ in rows if p is not None]
print(f"{within} of {len(rows)} within 3% (paired); median paired ratio {statistics.median(paired_all):.3f}, "
      f"range {min(paired_all):.3f}-{max(paired_all):.3f}")

for key in sorted(theirs_bshd):
    a, b = ours.get(key, []), theirs_bshd[key]
    if len(a) == len(b):
        paired = statistics.median(x / y for x, y in zip(a, b))
        print(f"{key[0]} {key[1]} {key[2]} {key[3]} | anchors' timer on BSHD views {statistics.median(b):.4f} ms | "
              f"ours / that {paired:.3f} | anchors BHSD / BSHD {statistics.median(theirs[key]) / statistics.median(b):.3f}")
if theirs_bshd:
    paired_bshd = [statistics.median(x / y for x, y in zip(ours[k], v)) for k, v in theirs_bshd.items()
                   if len(ours.get(k, [])) == len(v)]
    print(f"against anchors' timer on BSHD views: {sum(abs(p - 1) <= 0.03 for p in paired_bshd)} of "
          f"{len(paired_bshd)} within 3% (paired)")


def self_agreement(series):
    """How often one round of a tool lies within 3% of the median of its other rounds: the tool's own
    reproducibility, the bar the paired ratios above can be held to."""
    hits = total = 0
    for times in series:
        for i, t in enumerate(times):
            others = times[:i] + times[i + 1:]
            if others:
                total += 1
                hits += abs(t / statistics.median(others) - 1) <= 0.03
    return hits, total


for name, table in (("anchors.py", theirs), ("attnscope", ours), ("anchors' timer on BSHD views", theirs_bshd)):
    hits, total = self_agreement(list(table.values()))
    if total:
        print(f"{name}: a round within 3% of the median of its other rounds {hits} of {total} times "
              f"({100 * hits / total:.0f}%)")
