#!/usr/bin/env python3
"""Cross-checks attnscope's CUPTI metrics, launch statistics and peaks on a GPU machine.

For each validation case it runs attnscope, then the case's recorded `ncu_command` (output flags
added: --csv --page raw --print-units base --log-file), and compares every default metric per
kernel: percentages within +-2 points, bytes/FLOPs/time within +-3%. It also checks that the NVTX
filter selects exactly the metrics launch, compares launch statistics with ncu's LaunchStats and
Occupancy metrics, and compares `attnscope peaks` with a PyTorch GEMM and copy in the same call.

Environment: ATTNSCOPE_BIN (the executable), OUT (where the report goes). Prints a Markdown report.
Usage: validate_metrics.py [KERNELS] [--budget-s N]
"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import time

BIN = os.environ.get("ATTNSCOPE_BIN", "build/attnscope")
OUT = os.environ.get("OUT", "/tmp/attnscope_validate")
KERNELS = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "cudnn.sdpa,cublas.unfused,naive.unfused"
BUDGET_S = float(sys.argv[sys.argv.index("--budget-s") + 1]) if "--budget-s" in sys.argv else 330.0
CONFIGS = {
    "A": "--batch=4 --heads=16 --seq=1024 --head-dim=64 --dtype=bf16 --causal=0",
    "B": "--batch=2 --heads=16 --seq=4096 --head-dim=128 --dtype=fp16 --causal=1",
}
T0 = time.time()
REPORT = []


def say(line=""):
    print(line, flush=True)
    REPORT.append(line)


def sh(cmd, timeout=120):
    t = time.time()
    try:
        p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr, time.time() - t
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else str(e.stdout), time.time() - t


def left():
    return BUDGET_S - (time.time() - T0)


def load(path):
    with open(path) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    return lines[0], lines[1:]


def number(s):
    s = s.strip().replace(",", "")
    try:
        return float(s)
    except ValueError:
        return None


def ncu_rows(text):
    """Rows of ncu's --csv --page raw output: a header, a units row, then one row per kernel."""
    lines = [l for l in text.splitlines() if l.startswith('"')]
    if not lines:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header = rows[0]
    out = []
    for r in rows[2:]:
        out.append({h: v for h, v in zip(header, r)})
    return out


SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_PCT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
RD, WR = "dram__bytes_read.sum", "dram__bytes_write.sum"
L2 = "lts__throughput.avg.pct_of_peak_sustained_elapsed"
PIPE = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
WARPS = "sm__warps_active.avg.pct_of_peak_sustained_active"
TIME = "gpu__time_duration.sum"
FLOPS = ["sm__ops_path_tensor_src_fp16.sum", "sm__ops_path_tensor_src_bf16_dst_fp32.sum"]
PEAKPCT = [
    "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.pct_of_peak_sustained_elapsed",
    "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed",
    "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum.pct_of_peak_sustained_elapsed",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed",
    "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed",
]
# record field -> (how ncu's row gives it, kind)
FIELDS = [
    ("sm_throughput_pct", lambda r: r[SM], "pct"),
    ("dram_throughput_pct", lambda r: r[DRAM_PCT], "pct"),
    ("l2_throughput_pct", lambda r: r[L2], "pct"),
    ("tensor_pipe_pct", lambda r: r[PIPE], "pct"),
    ("achieved_occupancy_pct", lambda r: r[WARPS], "pct"),
    ("tensor_pct_of_peak", lambda r: sum(r[m] for m in PEAKPCT), "pct"),
    ("dram_bytes_read", lambda r: r[RD], "count"),
    ("dram_bytes_write", lambda r: r[WR], "count"),
    ("dram_bytes", lambda r: r[RD] + r[WR], "count"),
    ("tensor_flops", lambda r: sum(r[m] for m in FLOPS), "count"),
    ("gpu_time_ns", lambda r: r[TIME], "count"),
]


def agrees(ours, theirs, kind):
    if ours is None or theirs is None:
        return False, "missing"
    if kind == "pct":
        d = ours - theirs
        return abs(d) <= 2.0, f"{d:+.2f} pp"
    if ours == theirs:
        return True, "+0.00%"
    # Counters that are (nearly) zero on both sides: compare absolutely (e.g. tensor FLOPs of a
    # softmax, DRAM writes that stay in L2).
    if max(abs(ours), abs(theirs)) < 1e5:
        return abs(ours - theirs) < 1e5, f"{ours - theirs:+.0f} abs"
    rel = (ours - theirs) / abs(theirs)
    return abs(rel) <= 0.03, f"{rel * 100:+.2f}%"


def with_output_flags(cmd, log):
    assert cmd.startswith("ncu ")
    return "ncu --csv --page raw --print-units base --log-file " + log + " " + cmd[4:]


results = {"cases": [], "variants": [], "launch": [], "peaks": {}, "transform": "recorded"}
TRANSFORM = [None]  # (filter, extra app args) replacing the recorded ones, or None


def split_command(cmd):
    m = re.match(r"ncu --nvtx --nvtx-include '([^']*)' (.*) --metrics (\S+) (.*)$", cmd)
    return m.group(1), m.group(2), m.group(3), m.group(4)


def effective(cmd, rng):
    if TRANSFORM[0] is None:
        return cmd
    flt, extra = TRANSFORM[0]
    _, flags, names, app = split_command(cmd)
    esc = "".join("\\" + ch if ch in "@,[]/*+\\" else ch for ch in rng)
    return f"ncu --nvtx --nvtx-include '{flt.replace('<esc>', esc).replace('<raw>', rng)}' {flags} --metrics {names} {app}{extra}"


def diagnose():
    """On a tiny cudnn.sdpa case: which NVTX filters select exactly its one metrics launch."""
    out = "/tmp/attnscope_val_tiny"
    rc, text, _ = sh(f"{BIN} run --backend=cuda --kernels=cudnn.sdpa --batch=1 --heads=4 --seq=256 --head-dim=64 "
                     f"--dtype=fp16 --causal=0 --max-time-s=0.05 --quiet --force --out={out}", timeout=60)
    if rc != 0:
        say("tiny sweep failed:\n```\n" + text[-2000:] + "\n```")
        return
    case = load(out + "/results.jsonl")[1][0]
    rng = case["nvtx_range"]
    flt, flags, _, app = split_command(case["ncu_command"])
    say("## NVTX filter diagnosis on " + rng)
    say("recorded: `" + case["ncu_command"] + "`")
    tries = [
        ("recorded", flt, ""),
        ("recorded, --in-process", flt, " --in-process"),
        ("case/metrics", "attnscope@<esc>/metrics", ""),
        ("case/*/metrics]", "attnscope@<esc>/*/metrics]", ""),
        ("metrics]", "attnscope@metrics]", ""),
        ("regex .*metrics]", "regex:attnscope@.*metrics]", ""),
        ("case/ (whole case range)", "attnscope@<esc>/", ""),
        ("case/ --in-process", "attnscope@<esc>/", " --in-process"),
        ("no filter, 5 launches", None, ""),
    ]
    esc = "".join("\\" + ch if ch in "@,[]/*+\\" else ch for ch in rng)
    for i, (label, f, extra) in enumerate(tries):
        log = "/tmp/ncu_diag.csv"
        if os.path.exists(log):
            os.remove(log)
        nv = f"--nvtx --nvtx-include '{f.replace('<esc>', esc)}'" if f else "--launch-count 5"
        cmd = (f"ncu --csv --page raw --print-units base --log-file {log} {nv} {flags} --launch-count 50 "
               f"--metrics gpu__time_duration.sum {app.replace(' --out=/tmp/attnscope-ncu', ' --out=/tmp/attnscope-ncu-diag')}{extra}")
        if not f:
            cmd = cmd.replace(" --launch-count 50", "", 1)
        rc, text, secs = sh(cmd, timeout=60)
        logtext = open(log).read() if os.path.exists(log) else ""
        rows = ncu_rows(logtext)
        say(f"- {label}: `{nv}` -> rc {rc}, {len(rows)} kernels ({secs:.1f} s)")
        results["variants"].append({"label": label, "filter": f, "extra": extra, "rc": rc, "kernels": len(rows)})
        if i == 0 or (not f):
            prof = [l for l in logtext.splitlines() if l.startswith("==")]
            say("  ncu log: " + " | ".join(prof[:12]))
            try:
                rr, rcases = load("/tmp/attnscope-ncu-diag/results.jsonl")
                say(f"  replay run: metrics_status={rr.get('metrics_status')} reason={rr.get('metrics_reason', '')[:160]}")
            except Exception as e:  # noqa: BLE001
                say(f"  replay run: no results ({e})")
        if TRANSFORM[0] is None and i > 0 and f and "whole" not in label and len(rows) == 1 and \
                results["variants"][0]["kernels"] != 1:
            TRANSFORM[0] = (f, extra)
            results["transform"] = label
    rc, text, _ = sh("ncu --launch-count 1 env | grep -iE 'inject|preload|nvtx' | cut -c1-200", timeout=60)
    say("env under ncu: " + " | ".join(text.strip().splitlines()[:6]))
    say(f"comparisons use: {results['transform']}")


def run_sweeps():
    say("## Sweeps")
    runs = {}
    for name, args in CONFIGS.items():
        out = f"/tmp/attnscope_val_{name}"
        cmd = f"{BIN} run --backend=cuda --kernels={KERNELS} {args} --max-time-s=0.2 --quiet --force --out={out}"
        rc, text, secs = sh(cmd, timeout=180)
        say(f"- config {name}: `{cmd}` -> rc {rc} in {secs:.1f} s")
        if rc not in (0, 1):
            say("```\n" + text[-3000:] + "\n```")
            continue
        runs[name] = load(out + "/results.jsonl")
        run = runs[name][0]
        say(f"  metrics_status {run.get('metrics_status')} passes {run.get('metrics_passes')} "
            f"peaks {json.dumps(run.get('peaks'))}")
        for c in runs[name][1]:
            m = c.get("metrics", {})
            say(f"  - {c['kernel']} {c['status']} {c.get('reason', '')[:120]} metrics_status={c.get('metrics_status')} "
                f"{c.get('metrics_reason', '')[:200]} median_ms={c.get('timing', {}).get('median_ms')} "
                f"metrics wall_s={m.get('wall_s')} kernels={len(m.get('kernels', []))} launch={len(c.get('launch', []))} "
                f"case wall_s={c.get('wall_s')}")
    return runs


def compare_case(config, case):
    log = f"/tmp/ncu_{config}_{case['kernel']}.csv"
    cmd = with_output_flags(effective(case["ncu_command"], case["nvtx_range"]), log)
    rc, text, secs = sh(cmd, timeout=max(30, min(150, left())))
    rows = ncu_rows(open(log).read()) if os.path.exists(log) else []
    say(f"### {config} {case['kernel']} {case['nvtx_range']}")
    say(f"ncu rc {rc}, {secs:.1f} s, {len(rows)} kernels profiled (ours: {len(case['metrics']['kernels'])})")
    if rc != 0 or not rows:
        say("```\n" + text[-2500:] + "\n```")
    entry = {"config": config, "kernel": case["kernel"], "range": case["nvtx_range"], "ncu_rc": rc,
             "ncu_kernels": len(rows), "our_kernels": len(case["metrics"]["kernels"]), "rows": [], "ok": True,
             "command": case["ncu_command"]}
    say("| kernel | metric | attnscope | ncu | diff | ok |")
    say("|---|---|---|---|---|---|")
    ours_rows = case["metrics"]["kernels"]
    if len(rows) != len(ours_rows):
        entry["ok"] = False
    for i, (ours, row) in enumerate(zip(ours_rows, rows)):
        vals = {k: number(v) for k, v in row.items()}
        vals = {k: v for k, v in vals.items() if v is not None}
        for field, get, kind in FIELDS:
            try:
                theirs = get(vals)
            except KeyError:
                theirs = None
            mine = ours.get(field)
            ok, diff = agrees(mine, theirs, kind)
            entry["ok"] &= ok
            entry["rows"].append({"kernel": i, "name": ours["name"][:60], "ncu_name": row.get("Kernel Name", "")[:60],
                                  "field": field, "ours": mine, "ncu": theirs, "diff": diff, "ok": ok})
            say(f"| {i} {ours['name'][:40]} | {field} | {mine:.6g} | {theirs:.6g} | {diff} | {'yes' if ok else 'NO'} |"
                if mine is not None and theirs is not None else f"| {i} | {field} | {mine} | {theirs} | {diff} | NO |")
    results["cases"].append(entry)


def variants(case):
    """Which NVTX filters select what: the recorded one, the whole case range, unescaped."""
    rng = case["nvtx_range"]
    esc = "".join("\\" + ch if ch in "@,[]/*+\\" else ch for ch in rng)
    base = case["ncu_command"]
    m = re.match(r"ncu --nvtx --nvtx-include '([^']*)' (.*) --metrics (\S+) (.*)$", base)
    if not m:
        say("cannot parse ncu_command: " + base)
        return
    rest_flags, app = m.group(2), m.group(4)
    tries = [
        ("recorded: case/metrics]", m.group(1)),
        ("case range only: case/", f"attnscope@{esc}/"),
        ("unescaped name", f"attnscope@{rng}/metrics]"),
        ("metrics sub-range of any case", "attnscope@metrics]"),
    ]
    say("## NVTX filter variants on " + rng)
    for label, flt in tries:
        if left() < 20:
            break
        log = "/tmp/ncu_variant.csv"
        if os.path.exists(log):
            os.remove(log)
        cmd = (f"ncu --csv --page raw --print-units base --log-file {log} --nvtx --nvtx-include '{flt}' {rest_flags} "
               f"--launch-count 200 --metrics gpu__time_duration.sum {app}")
        rc, text, secs = sh(cmd, timeout=90)
        rows = ncu_rows(open(log).read()) if os.path.exists(log) else []
        say(f"- {label}: `--nvtx-include '{flt}'` -> rc {rc}, {len(rows)} kernels ({secs:.1f} s)")
        results["variants"].append({"label": label, "filter": flt, "rc": rc, "kernels": len(rows)})


LAUNCH_METRICS = ("launch__registers_per_thread,launch__shared_mem_per_block_static,"
                  "launch__shared_mem_per_block_dynamic,launch__grid_size,launch__block_size,"
                  "sm__maximum_warps_per_active_cycle_pct,launch__shared_mem_config_size,"
                  "launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,"
                  "launch__occupancy_limit_blocks")


def launch_check(config, case):
    m = re.match(r"(ncu --nvtx --nvtx-include '[^']*' .*) --metrics (\S+) (.*)$",
                 effective(case["ncu_command"], case["nvtx_range"]))
    log = f"/tmp/ncu_launch_{config}_{case['kernel']}.csv"
    cmd = with_output_flags(f"{m.group(1)} --metrics {LAUNCH_METRICS} {m.group(3)}", log)
    rc, text, secs = sh(cmd, timeout=90)
    rows = ncu_rows(open(log).read()) if os.path.exists(log) else []
    say(f"### launch statistics {config} {case['kernel']} (ncu rc {rc}, {len(rows)} kernels)")
    say("| kernel | regs ours/ncu | smem static | smem dynamic | grid x block | occupancy ours/ncu [%] | carve-out ours/ncu |")
    say("|---|---|---|---|---|---|---|")
    for ours, row in zip(case.get("launch", []), rows):
        v = {k: number(x) for k, x in row.items()}
        grid = ours["grid"][0] * ours["grid"][1] * ours["grid"][2]
        block = ours["block"][0] * ours["block"][1] * ours["block"][2]
        say(f"| {ours['name'][:50]} | {ours['regs']}/{v.get('launch__registers_per_thread')} | "
            f"{ours['smem_static']}/{v.get('launch__shared_mem_per_block_static')} | "
            f"{ours['smem_dynamic']}/{v.get('launch__shared_mem_per_block_dynamic')} | "
            f"{grid}x{block} / {v.get('launch__grid_size')}x{v.get('launch__block_size')} | "
            f"{ours.get('occupancy_theoretical')}/{v.get('sm__maximum_warps_per_active_cycle_pct')} | "
            f"{ours.get('smem_config')}/{v.get('launch__shared_mem_config_size')} |")
        results["launch"].append({"config": config, "ours": ours, "ncu": {k: x for k, x in v.items() if x is not None}})


TORCH = r'''
import torch, json
def med(f, w=5, n=20):
    for _ in range(w): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); f(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts) // 2]
r = {}
for name, dt in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
    a = torch.rand(8192, 8192, device="cuda", dtype=dt) * 2 - 1
    b = torch.rand(8192, 8192, device="cuda", dtype=dt) * 2 - 1
    r["tensor_tflops_" + name] = 2 * 8192**3 / (med(lambda: torch.matmul(a, b)) * 1e-3) / 1e12
    del a, b
x = torch.empty(2 << 30, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
r["dram_gbps"] = 2 * (2 << 30) / (med(lambda: y.copy_(x)) * 1e-3) / 1e9
print(json.dumps(r))
'''


def peaks():
    say("## Peaks: attnscope vs PyTorch (same call)")
    rc, text, secs = sh(f"{BIN} peaks --remeasure --json 2>/tmp/peaks.err", timeout=120)
    ours = json.loads(text[text.index("{"):text.rindex("}") + 1]) if rc == 0 else {}
    with open("/tmp/torch_peaks.py", "w") as f:
        f.write(TORCH)
    rc2, text2, secs2 = sh("python3 /tmp/torch_peaks.py", timeout=120)
    theirs = json.loads(text2.strip().splitlines()[-1]) if rc2 == 0 else {}
    say(f"attnscope peaks rc {rc} ({secs:.1f} s), torch rc {rc2} ({secs2:.1f} s)")
    if rc != 0:
        say("```\n" + text[-2000:] + "\n```")
    if rc2 != 0:
        say("```\n" + text2[-2000:] + "\n```")
    say("| ceiling | attnscope | PyTorch | diff | datasheet |")
    say("|---|---|---|---|---|")
    for k, sheet in (("tensor_tflops_fp16", "tensor_tflops_datasheet"), ("tensor_tflops_bf16", "tensor_tflops_datasheet"),
                     ("dram_gbps", "dram_gbps_datasheet")):
        a, b = ours.get(k + ("_measured" if k != "dram_gbps" else "_measured")), theirs.get(k)
        d = f"{(a - b) / b * 100:+.1f}%" if a and b else "-"
        say(f"| {k} | {a} | {b} | {d} | {ours.get(sheet)} |")
    results["peaks"] = {"attnscope": ours, "torch": theirs}


def main():
    os.makedirs(OUT, exist_ok=True)
    rc, text, _ = sh("nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; ncu --version | tail -1")
    say("# attnscope metrics validation, " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    say(text.strip())
    if "--diagnose" in sys.argv:
        diagnose()
    if "--peaks-first" in sys.argv:
        peaks()
    runs = run_sweeps()
    ok_cases = [(n, c) for n, (_, cases) in runs.items() for c in cases
                if c["status"] == "ok" and c.get("metrics_status") == "ok" and c.get("ncu_command")]
    # Priority: the libraries first, then ours, then naive.
    order = {"cudnn.sdpa": 0, "cublas.unfused": 1, "fa2.mma": 2, "naive.unfused": 3}
    ok_cases.sort(key=lambda nc: (order.get(nc[1]["kernel"], 9), nc[0]))
    say("## Metrics: attnscope (CUPTI) vs the recorded ncu command")
    for n, c in ok_cases:
        if left() < 30:
            say(f"(budget spent: {n} {c['kernel']} not compared)")
            continue
        compare_case(n, c)
    if "--peaks-first" not in sys.argv and left() > 40:
        peaks()
    if ok_cases and left() > 40 and "--variants" in sys.argv:
        variants(ok_cases[0][1])
    for n, c in ok_cases:
        if left() > 25 and "--launch" in sys.argv and n == "A" and c["kernel"] in ("cudnn.sdpa", "cublas.unfused", "fa2.mma"):
            launch_check(n, c)
    say("## Summary")
    for e in results["cases"]:
        bad = [r for r in e["rows"] if not r["ok"]]
        say(f"- {e['config']} {e['kernel']}: {'PASS' if e['ok'] else 'FAIL'} ({e['ncu_kernels']} ncu / {e['our_kernels']} ours; "
            f"{len(bad)} outside tolerance: {', '.join(r['field'] + ' ' + r['diff'] for r in bad[:6])})")
    with open(os.path.join(OUT, "validation.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(OUT, "validation.md"), "w") as f:
        f.write("\n".join(REPORT) + "\n")
    for n in runs:
        subprocess.run(["cp", f"/tmp/attnscope_val_{n}/results.jsonl", os.path.join(OUT, f"results_{n}.jsonl")])


if __name__ == "__main__":
    main()
