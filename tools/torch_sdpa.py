#!/usr/bin/env python3
"""External baselines for attnscope: PyTorch's scaled_dot_product_attention backends (flash,
efficient, cudnn, math) measured on the cases of an attnscope preset, in attnscope's protocol,
written as attnscope.result.v1 JSONL (kernels torch.flash, torch.efficient, torch.cudnn,
torch.math) that `attnscope report/compare/crossover/plot` and `attnscope merge` read.

    python3 tools/torch_sdpa.py --preset fa2-tokens16k --out runs/torch-fa2
    python3 tools/torch_sdpa.py --preset ffpa-large-d --backends efficient,math --max-time-s 0.5
    python3 tools/torch_sdpa.py --preset quick --plan-only       # the planned cases, no GPU needed
    python3 tools/torch_sdpa.py --self-check [--emit FILE]       # CPU checks of planning, ids, records

Planning mirrors profiling/sweep (preset.cpp, axis_parse.cpp, plan.cpp): the same axis syntax,
[sweep] + [[group]] overlay, tokens/hidden derivation, nesting order and FNV-1a case ids over the
same canonical text. Protocol: warm-up by time, CUDA-event samples until the median's relative
standard error is under the target or the time budget is spent, the L2 flushed (an L2-sized
memset) before every sample outside the timed region. Limits (docs/reports.md): inputs are
torch.randn from the seed, not attnscope's generator (same distribution, other values); the check
compares 48 sampled output rows with a float64 reference against the dtype bound attnscope uses
when no cuDNN baseline exists; a CUDA-event sample includes PyTorch's dispatch when a kernel is
shorter than it (tens of microseconds); sliding windows and Sq != Sk causal masks are passed as
explicit masks, which the flash and cudnn backends refuse (recorded as skipped with PyTorch's
message). Python 3.11+ (tomllib).
"""
import argparse
import json
import math
import os
import platform
import shlex
import socket
import subprocess
import sys
import time
import tomllib
import warnings

SCHEMA = "attnscope.result.v1"
TOOL_VERSION = "1"
BACKENDS = ("flash", "efficient", "cudnn", "math")
MAX_AXIS_VALUES = 4096
# The case id of torch.flash on B=2 Hq=16 Hkv=4 Sq=1024 Sk=2048 D=128 Dv=64 bf16 causal window
# (256,0), computed by profiling/sweep/plan.cpp make_case_id (pinned in
# tests/reports/test_report_torch_tool.cpp too).
PINNED_CASE_ID = "3a3ca28bb33a52a5"


class SpecError(Exception):
    """A bad preset or flag; the message names the field, the value and what is allowed."""


# ---- axis syntax (profiling/sweep/axis_parse.cpp) ----------------------------------------------

INT_ALLOWED = ("a list like 64,128 or a range like 320:1024:64 (start:stop:step, stop inclusive) or "
               "512:16384:x2 (geometric), values >= 1")


def _to_int(s):
    s = s.strip()
    if s.startswith("+"):
        s = s[1:]
    if not s or not (s.isdigit() or (s[0] == "-" and s[1:].isdigit())):
        raise ValueError(s)
    return int(s)


def parse_int_axis(text, field="axis"):
    out = []
    if not str(text).strip():
        raise SpecError(f"field '{field}' = '{text}': no values; allowed: {INT_ALLOWED}")
    for item in str(text).split(","):
        item = item.strip()
        if not item:
            raise SpecError(f"field '{field}' = '{text}': empty item in the list; allowed: {INT_ALLOWED}")
        if ":" in item:
            parts = [p.strip() for p in item.split(":")]
            if len(parts) != 3:
                raise SpecError(f"field '{field}' = '{text}': '{item}' is not a range; allowed: {INT_ALLOWED}")
            try:
                start, stop = _to_int(parts[0]), _to_int(parts[1])
                geometric = parts[2][:1] in ("x", "X")
                step = _to_int(parts[2][1:] if geometric else parts[2])
            except ValueError:
                raise SpecError(f"field '{field}' = '{text}': range '{item}' is not integers; allowed: {INT_ALLOWED}")
            if start < 1 or stop < start or (geometric and step < 2) or (not geometric and step < 1):
                raise SpecError(f"field '{field}' = '{text}': bad range '{item}'; allowed: {INT_ALLOWED}")
            v = start
            while True:
                out.append(v)
                if geometric:
                    if v > stop // step:
                        break
                    v *= step
                else:
                    if v > stop - step:
                        break
                    v += step
        else:
            try:
                v = _to_int(item)
            except ValueError:
                raise SpecError(f"field '{field}' = '{text}': '{item}' is not an integer; allowed: {INT_ALLOWED}")
            if v < 1:
                raise SpecError(f"field '{field}' = '{text}': {v} is below 1; allowed: {INT_ALLOWED}")
            out.append(v)
        if len(out) > MAX_AXIS_VALUES:
            raise SpecError(f"field '{field}' = '{text}': more than {MAX_AXIS_VALUES} values")
    return out


def int_axis(node, field):
    items = node if isinstance(node, list) else [node]
    out = []
    for e in items:
        if isinstance(e, bool):
            raise SpecError(f"field '{field}': expected an integer or a range string")
        if isinstance(e, int):
            if e < 1:
                raise SpecError(f"field '{field}' = '{e}': {e} is below 1; allowed: {INT_ALLOWED}")
            out.append(e)
        elif isinstance(e, str):
            out.extend(parse_int_axis(e, field))
        else:
            raise SpecError(f"field '{field}': expected an integer or a range string")
    return out


DTYPES = {"fp16": "fp16", "float16": "fp16", "half": "fp16", "bf16": "bf16", "bfloat16": "bf16",
          "fp32": "fp32", "float32": "fp32", "float": "fp32"}


def dtype_axis(node, field):
    out = []
    for e in node if isinstance(node, list) else [node]:
        for item in str(e).split(","):
            key = item.strip().lower()
            if key not in DTYPES:
                raise SpecError(f"field '{field}' = '{e}': '{item.strip()}' is not a dtype; allowed: fp16, bf16, fp32")
            out.append(DTYPES[key])
    return out


def bool_axis(node, field):
    out = []
    for e in node if isinstance(node, list) else [node]:
        if isinstance(e, bool):
            out.append(1 if e else 0)
        elif isinstance(e, int):
            if e not in (0, 1):
                raise SpecError(f"field '{field}' = '{e}': {e} is not 0 or 1")
            out.append(e)
        else:
            for item in str(e).split(","):
                key = item.strip().lower()
                if key in ("1", "true", "on", "yes"):
                    out.append(1)
                elif key in ("0", "false", "off", "no"):
                    out.append(0)
                else:
                    raise SpecError(f"field '{field}' = '{e}': '{item.strip()}' is not 0 or 1")
    return out


def parse_window(text, field="window"):
    text = str(text).strip()
    if text.lower() == "none":
        return (-1, -1)
    sides = [s.strip() for s in text.split(",")]
    if len(sides) > 2:
        raise SpecError(f"field '{field}' = '{text}': a window has 1 or 2 numbers")
    try:
        vals = [_to_int(s) for s in sides]
    except ValueError:
        raise SpecError(f"field '{field}' = '{text}': not integers")
    if any(v < -1 for v in vals):
        raise SpecError(f"field '{field}' = '{text}': below -1")
    if len(vals) == 1:
        return (-1, -1) if vals[0] == -1 else (vals[0], 0)
    return (vals[0], vals[1])


def window_axis(node, field):
    if isinstance(node, str):
        return [parse_window(w, field) for w in node.split(";")]
    if not isinstance(node, list) or not node:
        raise SpecError(f"field '{field}': expected a non-empty array or a string")
    if all(isinstance(e, int) and not isinstance(e, bool) for e in node):
        return [_window_from_ints(node, field)]
    out = []
    for e in node:
        if isinstance(e, list):
            out.append(_window_from_ints(e, field))
        elif isinstance(e, str):
            out.append(parse_window(e, field))
        elif isinstance(e, int):
            out.append((-1, -1) if e == -1 else (e, 0))
        else:
            raise SpecError(f"field '{field}': expected [L, R], \"L,R\" or an integer L")
    return out


def _window_from_ints(a, field):
    if not 1 <= len(a) <= 2 or any(v < -1 for v in a):
        raise SpecError(f"field '{field}' = '{a}': a window has one or two integers >= -1")
    if len(a) == 1:
        return (-1, -1) if a[0] == -1 else (a[0], 0)
    return (a[0], a[1])


# ---- presets (profiling/sweep/preset.cpp) -------------------------------------------------------

AXIS_KEYS = ("batch", "tokens", "heads", "hidden", "heads_kv", "seq", "seq_q", "seq_kv", "head_dim",
             "head_dim_v", "dtype", "causal", "window")
PROTOCOL_KEYS = ("warmup_ms", "min_samples", "max_samples", "max_time_s", "noise_pct", "l2", "graphs",
                 "graph_batch", "seed", "check")


def default_protocol():
    return {"warmup_ms": 20.0, "min_samples": 10, "max_samples": 2000, "max_time_s": 1.0, "noise_pct": 1.0,
            "l2": "cold", "graphs": False, "graph_batch": 0, "seed": 42, "check": True}


def empty_group():
    return {"batch": [], "heads": [], "heads_kv": [], "seq_q": [], "seq_kv": [], "head_dim": [],
            "head_dim_v": [], "dtype": [], "causal": [], "window": [], "tokens": None, "hidden": None}


def overlay_axes(table, prefix, g):
    for key in table:
        if key not in AXIS_KEYS:
            raise SpecError(f"field '{prefix}{key}': unknown key; allowed: {', '.join(AXIS_KEYS)}")
    for a, b in (("batch", "tokens"), ("heads", "hidden"), ("seq", "seq_q")):
        if a in table and b in table:
            raise SpecError(f"field '{prefix}{b}': '{a}' and '{b}' set the same axis; give one")
    if "batch" in table:
        g["batch"], g["tokens"] = int_axis(table["batch"], prefix + "batch"), None
    if "tokens" in table:
        g["tokens"], g["batch"] = int_axis(table["tokens"], prefix + "tokens")[0], []
    if "heads" in table:
        g["heads"], g["hidden"] = int_axis(table["heads"], prefix + "heads"), None
    if "hidden" in table:
        g["hidden"], g["heads"] = int_axis(table["hidden"], prefix + "hidden")[0], []
    if "heads_kv" in table:
        g["heads_kv"] = int_axis(table["heads_kv"], prefix + "heads_kv")
    if "seq" in table:
        g["seq_q"], g["seq_kv"] = int_axis(table["seq"], prefix + "seq"), []
    if "seq_q" in table:
        g["seq_q"] = int_axis(table["seq_q"], prefix + "seq_q")
    if "seq_kv" in table:
        g["seq_kv"] = int_axis(table["seq_kv"], prefix + "seq_kv")
    if "head_dim" in table:
        g["head_dim"] = int_axis(table["head_dim"], prefix + "head_dim")
    if "head_dim_v" in table:
        g["head_dim_v"] = int_axis(table["head_dim_v"], prefix + "head_dim_v")
    if "dtype" in table:
        g["dtype"] = dtype_axis(table["dtype"], prefix + "dtype")
    if "causal" in table:
        g["causal"] = bool_axis(table["causal"], prefix + "causal")
    if "window" in table:
        g["window"] = window_axis(table["window"], prefix + "window")


def parse_preset(text, source):
    try:
        root = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{source}: TOML syntax error: {e}")
    spec = {"name": os.path.splitext(os.path.basename(source))[0], "source": source, "groups": [],
            "protocol": default_protocol(), "kernels": root.get("kernels", []), "baseline": root.get("baseline", "")}
    spec["name"] = root.get("name", spec["name"])
    base = empty_group()
    if "sweep" in root:
        overlay_axes(root["sweep"], "sweep.", base)
    if "group" in root:
        for i, t in enumerate(root["group"]):
            g = {k: (list(v) if isinstance(v, list) else v) for k, v in base.items()}
            overlay_axes(t, f"group[{i}].", g)
            spec["groups"].append(g)
    elif "sweep" in root:
        spec["groups"].append(base)
    for key, value in root.get("protocol", {}).items():
        if key not in PROTOCOL_KEYS:
            raise SpecError(f"{source}: field 'protocol.{key}': unknown key; allowed: {', '.join(PROTOCOL_KEYS)}")
        spec["protocol"][key] = value
    return spec


def resolve_preset(name_or_path, presets_dir):
    if "/" in name_or_path or name_or_path.endswith(".toml"):
        path = name_or_path
    else:
        path = os.path.join(presets_dir, name_or_path + ".toml")
    if not os.path.isfile(path):
        raise SpecError(f"preset '{name_or_path}' not found (looked for {path})")
    return path


# ---- problems, case ids, counting (kernels/api/problem.cpp, profiling/sweep/plan.cpp) ----------

def make_problem(b, hq, hkv, sq, sk, d, dv, dtype, causal, window):
    return {"batch": b, "heads_q": hq, "heads_kv": hkv, "seq_q": sq, "seq_kv": sk, "head_dim": d,
            "head_dim_v": dv, "dtype": dtype, "causal": bool(causal), "window": [window[0], window[1]],
            "layout": "bshd"}


def validate(p):
    for name in ("batch", "heads_q", "heads_kv", "seq_q", "seq_kv", "head_dim", "head_dim_v"):
        if p[name] < 1:
            return f"{name} = {p[name]}: must be >= 1"
    if p["heads_q"] % p["heads_kv"] != 0:
        return (f"heads_kv = {p['heads_kv']}: must divide heads_q = {p['heads_q']} "
                "(GQA/MQA groups query heads evenly)")
    left, right = p["window"]
    if left < -1 or right < -1:
        return f"window = ({left},{right}): each side must be >= 0, or -1 for unbounded"
    return ""


def canonical_case_text(kernel, knobs, p):
    knob_text = ",".join(f"{k}:{knobs[k]}" for k in sorted(knobs))
    return (f"case.v1|kernel={kernel}|knobs={knob_text}|b={p['batch']}|hq={p['heads_q']}|hkv={p['heads_kv']}"
            f"|sq={p['seq_q']}|sk={p['seq_kv']}|d={p['head_dim']}|dv={p['head_dim_v']}|dtype={p['dtype']}"
            f"|causal={1 if p['causal'] else 0}|window={p['window'][0]},{p['window'][1]}|layout=bshd")


def make_case_id(kernel, knobs, p):
    h = 14695981039346656037  # FNV-1a 64 offset basis
    for byte in canonical_case_text(kernel, knobs, p).encode("utf-8"):
        h ^= byte
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def visible_range(p, i):
    diag = i + p["seq_kv"] - p["seq_q"]
    first, last = 0, p["seq_kv"]
    left, right = p["window"]
    if p["causal"]:
        last = min(last, diag + 1)
    if right >= 0:
        last = min(last, diag + right + 1)
    if left >= 0:
        first = max(first, diag - left)
    return first, max(first, last)


def visible_pairs_per_head(p):
    if not p["causal"] and p["window"] == [-1, -1]:
        return p["seq_q"] * p["seq_kv"]
    total = 0
    for i in range(p["seq_q"]):
        a, b = visible_range(p, i)
        total += b - a
    return total


def flops(p):
    return 2.0 * p["batch"] * p["heads_q"] * (p["head_dim"] + p["head_dim_v"]) * visible_pairs_per_head(p)


def min_bytes(p):
    e = 4 if p["dtype"] == "fp32" else 2
    q = p["batch"] * p["seq_q"] * p["heads_q"] * p["head_dim"]
    k = p["batch"] * p["seq_kv"] * p["heads_kv"] * p["head_dim"]
    v = p["batch"] * p["seq_kv"] * p["heads_kv"] * p["head_dim_v"]
    o = p["batch"] * p["seq_q"] * p["heads_q"] * p["head_dim_v"]
    return (q + k + v + o) * e


def mask_label(p):
    m = "causal" if p["causal"] else ""
    if p["window"] != [-1, -1]:
        m = (m + "+" if m else "") + f"win{p['window'][0]},{p['window'][1]}"
    return m or "full"


def plan(spec, kernels):
    """[(kernel, problem, case_id, skip_reason)] in plan.cpp's order and dedup rule (fp16 default)."""
    if not spec["groups"]:
        raise SpecError(f"{spec['source']}: no sweep axes; add a [sweep] table")
    cases, seen = [], set()
    for gi, g in enumerate(spec["groups"]):
        where = f"{spec['source']}: group[{gi}]"
        if not (g["batch"] or g["tokens"]) or not (g["heads"] or g["hidden"]) or not g["seq_q"] or not g["head_dim"]:
            raise SpecError(f"{where}: needs batch (or tokens), heads (or hidden), seq and head_dim")
        for dt in g["dtype"] or ["fp16"]:
            for c in g["causal"] or [0]:
                for w in g["window"] or [(-1, -1)]:
                    for b in [0] if g["tokens"] else g["batch"]:
                        for h in [0] if g["hidden"] else g["heads"]:
                            for hkv in g["heads_kv"] or [0]:
                                for d in g["head_dim"]:
                                    for dv in g["head_dim_v"] or [0]:
                                        for sq in g["seq_q"]:
                                            for sk in g["seq_kv"] or [0]:
                                                if g["tokens"]:
                                                    if g["tokens"] % sq:
                                                        raise SpecError(f"{where}: tokens = {g['tokens']} is not "
                                                                        f"divisible by seq_q = {sq}")
                                                    b = g["tokens"] // sq
                                                if g["hidden"]:
                                                    if g["hidden"] % d:
                                                        raise SpecError(f"{where}: hidden = {g['hidden']} is not "
                                                                        f"divisible by head_dim = {d}")
                                                    h = g["hidden"] // d
                                                p = make_problem(b, h, hkv or h, sq, sk or sq, d, dv or d, dt, c, w)
                                                invalid = validate(p)
                                                for k in kernels:
                                                    cid = make_case_id(k, {}, p)
                                                    if cid in seen:
                                                        continue
                                                    seen.add(cid)
                                                    cases.append((k, p, cid, invalid))
    return cases


# ---- statistics (profiling/engine/stats.cpp, sampler.cpp) ----------------------------------------

def quantile_sorted(s, q):
    if not s:
        return 0.0
    pos = q * (len(s) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def sample_std(x, mean):
    if len(x) < 2:
        return 0.0
    return math.sqrt(sum((v - mean) ** 2 for v in x) / (len(x) - 1))


def median_noise_pct(s):
    n = len(s)
    if n < 2:
        return 100.0
    median = quantile_sorted(s, 0.5)
    if median <= 0:
        return 100.0
    if n >= 8:
        sigma = (quantile_sorted(s, 0.75) - quantile_sorted(s, 0.25)) / 1.349
    else:
        sigma = sample_std(s, sum(s) / n)
    return 100.0 * 1.2533 * sigma / math.sqrt(n) / median


def summarize(samples, converged):
    s = sorted(samples)
    mean = sum(s) / len(s)
    return {"median_ms": quantile_sorted(s, 0.5), "min_ms": s[0], "max_ms": s[-1], "mean_ms": mean,
            "std_ms": sample_std(s, mean), "q1_ms": quantile_sorted(s, 0.25), "q3_ms": quantile_sorted(s, 0.75),
            "samples": len(s), "noise_pct": median_noise_pct(s), "converged": converged, "launches_per_sample": 1}


def measure(protocol, sample_ms, now=time.monotonic):
    warm_end = now() + protocol["warmup_ms"] * 1e-3
    while True:
        sample_ms()
        if now() >= warm_end:
            break
    samples, start, converged = [], now(), False
    next_check = max(1, protocol["min_samples"])
    while True:
        samples.append(sample_ms())
        n = len(samples)
        if n >= protocol["max_samples"]:
            break
        if n >= next_check:
            if median_noise_pct(sorted(samples)) <= protocol["noise_pct"]:
                converged = True
                break
            next_check = n + max(1, n // 20)
        if n >= 3 and now() - start >= protocol["max_time_s"]:
            break
    return summarize(samples, converged)


def dtype_rel_l2_bound(dtype):
    return {"fp16": 4.0 * 2.0 ** -11, "bf16": 4.0 * 2.0 ** -8, "fp32": 2e-5}[dtype]


# ---- records ----------------------------------------------------------------------------------

def utc(fmt):
    return time.strftime(fmt, time.gmtime())


def case_record(kernel, p, case_id, status, reason, timing=None, correctness=None, peak_bytes=None, wall_s=0.0):
    rec = {"schema": SCHEMA, "record": "case", "case_id": case_id, "kernel": kernel, "knobs": {}, "problem": p,
           "status": status, "reason": reason, "flops": flops(p), "min_bytes": min_bytes(p),
           "nvtx_range": f"{kernel}/{p['batch']}x{p['heads_q']}x{p['seq_q']}x{p['head_dim']}/{p['dtype']}/"
                         f"{mask_label(p)}",
           "wall_s": wall_s}
    if timing:
        rec["timing"] = timing
        s = timing["median_ms"] * 1e-3
        if s > 0:
            rec["tflops"] = rec["flops"] / s * 1e-12
            rec["gbps"] = rec["min_bytes"] / s * 1e-9
            rec["queries_per_s"] = p["batch"] * p["heads_q"] * p["seq_q"] / s
    if correctness:
        rec["correctness"] = correctness
    if peak_bytes is not None:
        rec["memory"] = {"device_bytes_peak": int(peak_bytes)}
    return rec


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(__file__)), timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def os_description():
    """PRETTY_NAME of /etc/os-release and the kernel release, as attnscope records it."""
    name = ""
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    kernel = f"{platform.system()} {platform.release()}"
    return f"{name} ({kernel})" if name else kernel


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def run_record(spec, protocol, torch=None):
    rec = {"schema": SCHEMA, "record": "run", "run_id": f"{utc('%Y%m%d-%H%M%S')}-torch-{spec['name']}",
           "started_at": utc("%Y-%m-%dT%H:%M:%SZ"),
           "version": f"tools/torch_sdpa.py {TOOL_VERSION}" + (f" (torch {torch.__version__})" if torch else ""),
           "git_commit": git_commit(), "command_line": "python3 " + shlex.join(sys.argv),
           "host": socket.gethostname(), "backend": "cuda", "driver": "", "cuda_runtime": "", "cudnn": "",
           "cupti": "", "cpu_model": cpu_model(), "cpu_threads": os.cpu_count() or 0,
           "protocol": protocol, "peaks": {}, "baseline": "", "os": os_description()}
    if torch is not None:
        props = torch.cuda.get_device_properties(0)
        rec["gpu"] = {"name": props.name, "cc": f"{props.major}.{props.minor}", "sms": props.multi_processor_count,
                      "l2_bytes": int(getattr(props, "L2_cache_size", 0)), "mem_bytes": int(props.total_memory),
                      "pci_bus_id": ""}
        rec["cuda_runtime"] = torch.version.cuda or ""
        try:
            v = torch.backends.cudnn.version()
        except RuntimeError as e:  # a foreign libcudnn first on LD_LIBRARY_PATH: torch.cudnn cases will say so
            print(f"torch_sdpa: cuDNN unusable: {str(e).splitlines()[0]}", file=sys.stderr, flush=True)
            v = None
        if v:
            rec["cudnn"] = f"{v // 10000}.{v % 10000 // 100}.{v % 100}" if v >= 10000 else str(v)
        try:
            with open("/proc/driver/nvidia/version") as f:
                words = f.readline().split()
                rec["driver"] = next((w for w in words if w.count(".") >= 1 and w.replace(".", "").isdigit()), "")
        except OSError:
            pass
    return rec


# ---- measuring with PyTorch -------------------------------------------------------------------

def measure_case(torch, F, backend_enum, sdpa_kernel, kernel, p, case_id, protocol, flush):
    """One case record: check on sampled rows against float64, then time."""
    t0 = time.monotonic()
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[p["dtype"]]
    gen = torch.Generator(device="cuda").manual_seed(int(protocol["seed"]))
    B, hq, hkv, sq, sk, d, dv = (p[k] for k in ("batch", "heads_q", "heads_kv", "seq_q", "seq_kv", "head_dim",
                                                "head_dim_v"))
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    try:
        q = torch.randn(B, hq, sq, d, device="cuda", dtype=dt, generator=gen)
        k = torch.randn(B, hkv, sk, d, device="cuda", dtype=dt, generator=gen)
        v = torch.randn(B, hkv, sk, dv, device="cuda", dtype=dt, generator=gen)
        kwargs = {"enable_gqa": True} if hkv != hq else {}
        window = p["window"] != [-1, -1]
        if window:
            i = torch.arange(sq, device="cuda").view(-1, 1) + (sk - sq)
            j = torch.arange(sk, device="cuda").view(1, -1)
            keep = torch.ones(sq, sk, dtype=torch.bool, device="cuda")
            if p["causal"]:
                keep &= j <= i
            if p["window"][1] >= 0:
                keep &= j <= i + p["window"][1]
            if p["window"][0] >= 0:
                keep &= j >= i - p["window"][0]
            kwargs["attn_mask"] = keep
        elif p["causal"] and sq != sk:
            from torch.nn.attention.bias import causal_lower_right
            kwargs["attn_mask"] = causal_lower_right(sq, sk)
        elif p["causal"]:
            kwargs["is_causal"] = True

        def call():
            return F.scaled_dot_product_attention(q, k, v, **kwargs)

        with sdpa_kernel([backend_enum]), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                o = call()
                torch.cuda.synchronize()
            except RuntimeError as e:
                if "out of memory" in str(e).lower() or "No available kernel" not in str(e):
                    raise  # oom below; anything but a refusal is an error, not a skip
                why = "; ".join(dict.fromkeys(str(w.message).strip() for w in caught)) or str(e)
                return case_record(kernel, p, case_id, "skipped",
                                   f"PyTorch refuses: {str(e).strip()} {why}".strip()[:2000],
                                   wall_s=time.monotonic() - t0)
            correctness = check_rows(torch, q, k, v, o, p, int(protocol["seed"]))
            if not correctness["pass"]:
                return case_record(kernel, p, case_id, "mismatch",
                                   f"sampled rows against float64: rel_l2 {correctness['rel_l2']:.3e} > tol "
                                   f"{correctness['tol']:.3e}", correctness=correctness,
                                   peak_bytes=torch.cuda.max_memory_allocated(), wall_s=time.monotonic() - t0)
            del o
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

            def sample():
                if flush is not None:
                    flush.zero_()
                start.record()
                call()
                stop.record()
                stop.synchronize()
                return start.elapsed_time(stop)

            timing = measure(protocol, sample)
        return case_record(kernel, p, case_id, "ok", "", timing=timing, correctness=correctness,
                           peak_bytes=torch.cuda.max_memory_allocated(), wall_s=time.monotonic() - t0)
    except torch.cuda.OutOfMemoryError as e:
        return case_record(kernel, p, case_id, "oom", f"out of device memory: {str(e).splitlines()[0]}",
                           wall_s=time.monotonic() - t0)
    except RuntimeError as e:
        if "out of memory" in str(e).lower():
            return case_record(kernel, p, case_id, "oom", str(e).splitlines()[0], wall_s=time.monotonic() - t0)
        return case_record(kernel, p, case_id, "error", str(e).strip()[:2000], wall_s=time.monotonic() - t0)
    finally:
        torch.cuda.empty_cache()


def check_rows(torch, q, k, v, o, p, seed, rows=48):
    """rel L2 of 48 sampled output rows (the last query row always among them) against float64."""
    import random
    rng = random.Random(seed ^ 0x5A5A5A5A)
    B, hq, hkv, sq = p["batch"], p["heads_q"], p["heads_kv"], p["seq_q"]
    scale = 1.0 / math.sqrt(p["head_dim"])
    num = den = 0.0
    max_abs, nonfinite = 0.0, 0
    for n in range(rows):
        b, h, i = rng.randrange(B), rng.randrange(hq), rng.randrange(sq)
        if n == 0:
            i = sq - 1
        kh = h // (hq // hkv)
        first, last = visible_range(p, i)
        got = o[b, h, i].double()
        if last <= first:
            ref = torch.zeros_like(got)
        else:
            s = (k[b, kh, first:last].double() @ q[b, h, i].double()) * scale
            w = torch.softmax(s, dim=0)
            ref = w @ v[b, kh, first:last].double()
        bad = ~torch.isfinite(got)
        nonfinite += int(bad.sum())
        diff = (got - ref)[~bad]
        num += float((diff * diff).sum())
        den += float((ref * ref).sum())
        if diff.numel():
            max_abs = max(max_abs, float(diff.abs().max()))
    rel = math.sqrt(num / den) if den > 0 else math.sqrt(num)
    if nonfinite:
        rel = float("inf")
    tol = dtype_rel_l2_bound(p["dtype"])
    return {"max_abs": max_abs, "rel_l2": rel if math.isfinite(rel) else "inf", "tol": tol,
            "pass": nonfinite == 0 and rel <= tol, "reference": f"float64 on {rows} sampled rows",
            "tol_rule": f"{p['dtype']} bound {tol:.2e}", "nonfinite": nonfinite,
            "sampled_rows_rel_l2": rel if math.isfinite(rel) else "inf", "sampled_rows": rows}


def run(args):
    path = resolve_preset(args.preset, args.presets_dir)
    with open(path, "rb") as f:
        spec = parse_preset(f.read().decode("utf-8"), path)
    protocol = spec["protocol"]
    for key, flag in (("warmup_ms", args.warmup_ms), ("min_samples", args.min_samples),
                      ("max_samples", args.max_samples), ("max_time_s", args.max_time_s),
                      ("noise_pct", args.noise), ("l2", args.l2), ("seed", args.seed)):
        if flag is not None:
            protocol[key] = flag
    protocol["graphs"], protocol["graph_batch"] = False, 0
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    for b in backends:
        if b not in BACKENDS:
            raise SpecError(f"--backends {args.backends}: unknown backend '{b}'; allowed: {', '.join(BACKENDS)}")
    kernels = [f"torch.{b}" for b in backends]
    cases = plan(spec, kernels)
    if args.case_id:
        cases = [c for c in cases if c[2] in args.case_id.split(",")]
    if args.plan_only:
        for kernel, p, cid, skip in cases:
            print(cid, kernel, canonical_case_text(kernel, {}, p), skip)
        return 0

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    enums = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
             "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}
    if not torch.cuda.is_available():
        raise SpecError("no CUDA device: PyTorch sees none (torch.cuda.is_available() is False)")
    out_dir = args.out or os.path.join("runs", f"{utc('%Y%m%d-%H%M%S')}-torch-{spec['name']}")
    os.makedirs(out_dir, exist_ok=True)
    out_file = os.path.join(out_dir, "results.jsonl")
    if os.path.exists(out_file) and not args.force:
        raise SpecError(f"{out_file}: results file already exists; pass --force to overwrite it")
    props = torch.cuda.get_device_properties(0)
    l2 = int(getattr(props, "L2_cache_size", 0)) or (1 << 20)
    flush = torch.empty(l2, dtype=torch.uint8, device="cuda") if protocol["l2"] == "cold" else None
    print(f"torch_sdpa: {len(cases)} cases on {props.name} -> {out_file}", file=sys.stderr, flush=True)
    with open(out_file, "w") as f:
        f.write(json.dumps(run_record(spec, protocol, torch)) + "\n")
        f.flush()
        for n, (kernel, p, cid, skip) in enumerate(cases):
            if skip:
                rec = case_record(kernel, p, cid, "skipped", skip)
            else:
                rec = measure_case(torch, F, enums[kernel.split(".", 1)[1]], sdpa_kernel, kernel, p, cid, protocol,
                                   flush)
            f.write(json.dumps(rec) + "\n")
            f.flush()
            os.fsync(f.fileno())
            t = rec.get("timing")
            print(f"[{n + 1}/{len(cases)}] {kernel} {p['batch']}x{p['heads_q']}x{p['seq_q']}x{p['head_dim']} "
                  f"{p['dtype']} {mask_label(p)}: {rec['status']}"
                  + (f" {t['median_ms']:.4f} ms {rec['tflops']:.1f} TFLOPS" if t else f" ({rec['reason'][:80]})"),
                  file=sys.stderr, flush=True)
    print(f"results: {out_file}")
    return 0


# ---- self-check (CPU only) --------------------------------------------------------------------

def self_check(emit, presets_dir):
    def expect(cond, what):
        if not cond:
            raise AssertionError(what)

    gqa = make_problem(2, 16, 4, 1024, 2048, 128, 64, "bf16", 1, (256, 0))
    expect(make_case_id("torch.flash", {}, gqa) == PINNED_CASE_ID,
           f"case id {make_case_id('torch.flash', {}, gqa)} != pinned {PINNED_CASE_ID}")
    expect(parse_int_axis("512:16384:x2") == [512, 1024, 2048, 4096, 8192, 16384], "geometric range")
    expect(parse_int_axis("320:1024:64")[-1] == 1024 and len(parse_int_axis("320:1024:64")) == 12, "linear range")
    expect(parse_int_axis("64,128,320:400:64") == [64, 128, 320, 384], "mixed axis")
    expect(window_axis([[64, 0], "128,128", 32], "w") == [(64, 0), (128, 128), (32, 0)], "windows")
    expect(window_axis([64, 0], "w") == [(64, 0)], "flat window")
    for bad in ("abc", "0", "8:4:1", "1:9:x1"):
        try:
            parse_int_axis(bad)
            expect(False, f"axis {bad!r} accepted")
        except SpecError:
            pass
    # Counting: a full causal square has S(S+1)/2 pairs.
    sq = make_problem(1, 1, 1, 128, 128, 64, 64, "fp16", 1, (-1, -1))
    expect(visible_pairs_per_head(sq) == 128 * 129 // 2, "causal pairs")
    expect(flops(sq) == 2.0 * 128 * 128 * 129 // 2, "flops")
    expect(min_bytes(sq) == 4 * 128 * 64 * 2, "min_bytes")
    # Statistics: numpy's quantile (type 7) and the robust noise.
    s = [1.0, 2.0, 3.0, 4.0, 10.0]
    expect(abs(quantile_sorted(s, 0.25) - 2.0) < 1e-12 and abs(quantile_sorted(s, 0.5) - 3.0) < 1e-12, "quantile")
    t = summarize([1.0, 1.1, 0.9, 1.0, 1.2, 1.0, 0.95, 1.05, 1.0, 1.0], True)
    expect(t["samples"] == 10 and abs(t["median_ms"] - 1.0) < 1e-12, "summarize")
    # The stopping rule with an injected clock: converges at min_samples on constant samples.
    clock = [0.0]

    def fake_sample():
        clock[0] += 0.001
        return 1.0

    m = measure({"warmup_ms": 0, "min_samples": 10, "max_samples": 50, "max_time_s": 1.0, "noise_pct": 1.0},
                fake_sample, now=lambda: clock[0])
    expect(m["samples"] == 10 and m["converged"], f"stopping rule: {m['samples']} samples")
    # The shipped presets expand as attnscope plans them.
    records = []
    for name, problems in (("ffpa-large-d", 13), ("fa2-tokens16k", 36)):
        path = resolve_preset(name, presets_dir)
        with open(path, "rb") as f:
            spec = parse_preset(f.read().decode("utf-8"), path)
        cases = plan(spec, ["torch.flash", "torch.efficient"])
        expect(len(cases) == 2 * problems, f"{name}: {len(cases)} cases, expected {2 * problems}")
        if name == "fa2-tokens16k":
            shapes = {(c[1]["batch"], c[1]["heads_q"], c[1]["seq_q"], c[1]["head_dim"]) for c in cases}
            expect((32, 32, 512, 64) in shapes and (1, 8, 16384, 256) in shapes, "tokens/hidden derivation")
            expect(cases[0][1]["causal"] is False and cases[-1][1]["causal"] is True, "causal nesting")
        records.extend(cases[:2])
    spec = {"name": "self-check", "source": "self-check"}
    lines = [json.dumps(run_record(spec, default_protocol()))]
    timing = summarize([1.0, 1.1, 0.9], False)
    corr = {"max_abs": 1e-3, "rel_l2": 3e-4, "tol": dtype_rel_l2_bound("fp16"), "pass": True,
            "reference": "float64 on 48 sampled rows", "tol_rule": "fp16 bound 1.95e-03", "nonfinite": 0,
            "sampled_rows_rel_l2": 3e-4, "sampled_rows": 48}
    kernel, p, cid, _ = records[0]
    lines.append(json.dumps(case_record(kernel, p, cid, "ok", "", timing=timing, correctness=corr,
                                        peak_bytes=1 << 30, wall_s=0.5)))
    kernel, p, cid, _ = records[1]
    lines.append(json.dumps(case_record(kernel, p, cid, "skipped", "PyTorch refuses: No available kernel.")))
    lines.append(json.dumps(case_record("torch.flash", gqa, make_case_id("torch.flash", {}, gqa), "oom",
                                        "out of device memory")))
    if emit:
        with open(emit, "w") as f:
            f.write("\n".join(lines) + "\n")
    print("torch_sdpa self-check: ok")
    return 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", help="preset name (assets/presets) or .toml path")
    ap.add_argument("--presets-dir", default=os.environ.get("ATTNSCOPE_PRESETS", os.path.join(here, "..", "assets",
                                                                                             "presets")))
    ap.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated: flash,efficient,cudnn,math")
    ap.add_argument("--out", help="results directory (default runs/<utc>-torch-<preset>)")
    ap.add_argument("--force", action="store_true", help="overwrite an existing results.jsonl")
    ap.add_argument("--warmup-ms", type=float)
    ap.add_argument("--min-samples", type=int)
    ap.add_argument("--max-samples", type=int)
    ap.add_argument("--max-time-s", type=float)
    ap.add_argument("--noise", type=float, help="target relative standard error of the median [%%]")
    ap.add_argument("--l2", choices=("cold", "warm"))
    ap.add_argument("--seed", type=int)
    ap.add_argument("--case-id", help="only these case ids (comma-separated), e.g. to profile one with ncu")
    ap.add_argument("--plan-only", action="store_true", help="print the planned cases and exit")
    ap.add_argument("--self-check", action="store_true", help="CPU checks of planning, ids and records")
    ap.add_argument("--emit", help="with --self-check: write sample records to this JSONL file")
    args = ap.parse_args()
    try:
        if args.self_check:
            return self_check(args.emit, args.presets_dir)
        if not args.preset:
            raise SpecError("--preset is required (a name from assets/presets or a .toml path)")
        return run(args)
    except SpecError as e:
        print(f"torch_sdpa: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
