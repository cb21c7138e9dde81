"""attnscope from Python: plan and run sweeps with the same engine, planner, checks, timing and
CUPTI metrics as the ``attnscope`` command, with Python callables as kernels (docs/python.md).

    import attnscope
    rows = attnscope.run(preset="fa2-tokens16k", kernels=["cudnn.sdpa", "torch.flash", my_attn])
    import pandas; df = pandas.DataFrame(rows)

A Python kernel is a callable ``fn(q, k, v, *, causal, window, scale, out=None) -> o`` defined at
the top level of a .py file (cases run in worker processes, which import it from there), or a
built-in adapter id: torch.flash, torch.efficient, torch.cudnn, torch.math, torch.flex, triton.fa2.
"""
import importlib.util
import inspect
import json
import os
import sys
import tempfile

# A worker or describe process started for Python kernels imports PyTorch (where it is installed)
# before attnscope's extension: both need libraries of the same sonames (libcudnn.so.9, libcublas),
# and whichever loads first serves the process. PyTorch's kernels must run on PyTorch's own copies,
# as its users run them; attnscope's built-in kernels in that worker then use them too, and the
# worker's record names the versions it really ran.
if os.environ.get("ATTNSCOPE_PYTHON_WORKER") == "1" and importlib.util.find_spec("torch") is not None:
    try:
        import torch  # noqa: F401
    except Exception:  # a broken install: the adapters report it when they load
        pass

from . import _attnscope  # noqa: E402
from ._kernels import Unsupported  # noqa: E402

__all__ = ["run", "plan", "load", "records", "kernels", "main", "Unsupported"]

_attnscope.set_worker_interpreter(sys.executable)


def main(args):
    """``attnscope ARGS...`` in this process; returns its exit code."""
    return _attnscope.main([str(a) for a in args])


def _flag_value(name, value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if name == "varlen":  # items hold commas (list:1,2): ';' separates them
        items = value if isinstance(value, list) else [value]
        return ";".join("none" if v is None else str(v) for v in items)
    if name in ("window", "compress"):
        items = value if isinstance(value, list) else [value]
        return ";".join("none" if w is None else (",".join(str(x) for x in w) if isinstance(w, (tuple, list))
                                                   else str(w)) for w in items)
    if isinstance(value, (list, tuple, range)):
        return ",".join(_flag_value(name, v) for v in value)
    return str(value)


def _kernel_entry(kernel):
    """(the --kernels id, the --python-kernel value or None) of a kernel id or callable, or of a
    variant: a (kernel, {knob: value}) pair, e.g. (my_attn, {"bucket": 128}) for ID@bucket=128."""
    if isinstance(kernel, tuple):
        if len(kernel) != 2 or not isinstance(kernel[1], dict):
            raise TypeError(f"kernels: {kernel!r}: a variant is (kernel, {{knob: value}})")
        kernel_id, spec = _kernel_entry(kernel[0])
        knobs = "+".join(f"{k}={v}" for k, v in sorted(kernel[1].items()))
        return (kernel_id + "@" + knobs if knobs else kernel_id), spec
    if isinstance(kernel, str):
        return kernel, None
    if not callable(kernel):
        raise TypeError(f"kernels: {kernel!r} is neither a kernel id nor a callable")
    fn = inspect.unwrap(kernel)
    path = inspect.getsourcefile(fn) if hasattr(fn, "__code__") else None
    name = getattr(fn, "__qualname__", "")
    if not path or not os.path.isfile(path) or "<" in name:
        raise ValueError(
            f"kernels: {getattr(fn, '__name__', kernel)!r} cannot be imported by a worker process; define it at "
            "the top level of a .py file (in a notebook, %%writefile my_attn.py then import it)")
    # The command line's default id, <file stem>.<function> (kernels/api/python_entry.cpp), unless
    # the callable names its own; given explicitly, so both sides always agree.
    kernel_id = getattr(kernel, "attnscope_id", None) or \
        _id_part(os.path.splitext(os.path.basename(path))[0]) + "." + _id_part(name)
    return kernel_id, f"{os.path.abspath(path)}:{name}={kernel_id}"


def _id_part(text):
    return "".join(c.lower() if c.isascii() and c.isalnum() else ("-" if c == "-" else "_") for c in text)


def _sweep_args(preset, kernels, backend, axes, extra):
    args = []
    if preset is not None:
        args += ["--preset", str(preset)]
    if kernels is not None:
        ids, specs = [], []
        for k in kernels:
            kernel_id, spec = _kernel_entry(k)
            ids.append(kernel_id)
            if spec:
                specs.append(spec)
        args += ["--kernels", ",".join(ids)]
        for s in specs:
            args += ["--python-kernel", s]
    if backend is not None:
        args += ["--backend", backend]
    for name, value in axes.items():
        args += ["--" + name.replace("_", "-"), _flag_value(name, value)]
    return args + [str(a) for a in extra]


def plan(preset=None, kernels=None, *, backend=None, args=(), **axes):
    """The cases a run would measure, in run order, as the C++ planner makes them (case_id, kernel,
    problem, skip reason). Axes are the run flags' names: seq=[1024, 2048], head_dim=128, causal=[0, 1],
    window=[(128, 0)], dtype="fp16", pass_="bwd" ..."""
    axes = {("pass" if k == "pass_" else k): v for k, v in axes.items()}
    with tempfile.TemporaryDirectory(prefix="attnscope-plan-") as out:
        argv = ["run", "--plan-only", "--quiet", "--force", "--out", out] + _sweep_args(preset, kernels, backend, axes, args)
        code = main(argv)
        if code != 0:
            raise RuntimeError(f"attnscope {' '.join(argv)}: exit {code} (the reason is printed above)")
        with open(os.path.join(out, "plan.jsonl")) as f:
            lines = [json.loads(line) for line in f if line.strip()]
    return [line for line in lines if line.get("record") == "case" or "case_id" in line]


def run(preset=None, kernels=None, *, out=None, backend=None, quiet=False, args=(), **axes):
    """Runs a sweep (workers, checks, timing, metrics: what `attnscope run` does) and returns its case
    records as flat rows (see load). ``out`` is the run directory (default: a new folder under runs/,
    or the temporary directory); progress goes to stderr unless ``quiet``."""
    axes = {("pass" if k == "pass_" else k): v for k, v in axes.items()}
    if out is None:
        out = tempfile.mkdtemp(prefix="attnscope-run-", dir=os.path.abspath("runs") if os.path.isdir("runs") else None)
        extra_force = ["--force"]
    else:
        extra_force = []
    argv = ["run", "--out", str(out)] + extra_force + (["--quiet"] if quiet else []) + \
        _sweep_args(preset, kernels, backend, axes, args)
    code = main(argv)
    if code not in (0, 1):
        raise RuntimeError(f"attnscope {' '.join(argv)}: exit {code} (the reason is printed above)")
    return load(out)


def records(path):
    """(run record, [case records]) of a results file or run directory, as dicts."""
    run_text, cases = _attnscope.read_results(str(path))
    return json.loads(run_text), [json.loads(c) for c in cases]


def _flatten(prefix, value, row):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, row)
    else:
        row[prefix] = value


def load(path):
    """The case records of a run as flat rows ({"kernel": ..., "problem.seq_q": ..., "timing.median_ms": ...}),
    ready for pandas.DataFrame."""
    _, cases = records(path)
    rows = []
    for c in cases:
        row = {}
        _flatten("", c, row)
        rows.append(row)
    return rows


def kernels():
    """The registry of this process: built-in kernels, plug-ins and Python kernels loaded so far."""
    return list(_attnscope.registry())
