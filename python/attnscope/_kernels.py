"""Python kernels inside the engine: resolving an entry to kernel definitions, binding a callable to
a case's tensors, and copying an output it returns into attnscope's O buffer (after the check run
only, so timed runs measure the callable alone). The C++ half is app/python/python_kernel.cpp.

A kernel is any callable ``fn(q, k, v, *, causal, window, scale, out=None) -> o``: q [B, Sq, Hq, D],
k [B, Sk, Hkv, D], v [B, Sk, Hkv, Dv] and o [B, Sq, Hq, Dv] (BSHD, contiguous) are torch CUDA
tensors on the cuda backend and NumPy float32 arrays on the cpu backend. ``causal`` is bottom-right
aligned (FlashAttention's convention); ``window`` is None or (left, right) keys around the diagonal,
-1 meaning unbounded on that side. The callable writes ``out`` in place, or returns a new tensor.
Optional attributes refine it: ``attnscope_id`` (the id attnscope.run gives it; on the command line
``=ID`` does), ``attnscope_description``,
``attnscope_why_not(problem) -> str`` (empty: taken) and ``attnscope_prepare(problem) -> callable``
(set-up outside the timed region, e.g. compiling; its time is the case's ``prepare`` phase).

A backward (the kernel contract's, docs/design.md "Passes") takes two more attributes:
``attnscope_writes_lse = True`` (the forward is then also given ``lse``, [B, Hq, Sq] float32, to
fill with each row's natural-log sum of exp of the scaled scores; or a callable ``(problem) -> bool``
when only some problems need it, e.g. those whose pass has a backward) and
``attnscope_backward(q, k, v, o, lse, do, *, causal, window, scale, dq, dk, dv)``, which writes
every element of dq [B, Sq, Hq, D], dk [B, Sk, Hkv, D] and dv [B, Sk, Hkv, Dv] in place (dk and dv
summed over the query heads of a group), rows with no visible key giving zeros, or returns a tuple
(dq, dk, dv) of new tensors of those shapes, which attnscope copies into its buffers after the check
run only (as it copies a returned o), so the timed runs measure the backward alone.
``attnscope_backward_why_not(problem) -> str`` may refuse problems for the backward alone.
"""
import functools
import hashlib
import importlib.util
import os
import platform
import sys


class Unsupported(Exception):
    """A kernel does not take this problem: the case is `skipped` with this message."""


def _refusal(why_not, problem):
    """What a kernel's optional why_not says of ``problem``: "" when it takes it (or has no why_not)."""
    reason = why_not(dict(problem)) if why_not is not None else None
    return str(reason) if reason else ""


class KernelDef:
    """One registry entry made from Python."""

    def __init__(self, id, description, fn=None, why_not=None, prepare=None, backward=None,
                 backward_why_not=None, writes_lse=False, compressed_mask=False, varlen=False):
        self.id = id
        self.description = description
        self._fn = fn
        self._why_not = why_not
        self._prepare = prepare
        self.backward = backward
        self._backward_why_not = backward_why_not
        # A bool, or a callable (problem) -> bool for kernels that write the LSE for some problems only.
        self.writes_lse = writes_lse if callable(writes_lse) else bool(writes_lse)
        # Takes NSA's compressed-branch mask (a ``compress=(l, d)`` keyword); a kernel that does not
        # say so is never given such a problem.
        self.compressed_mask = bool(compressed_mask)
        # Takes varlen batches: packed [total, H, D] tensors and the keywords cu_seqlens_q, cu_seqlens_k
        # (int32 prefix sums, batch + 1 each), max_seqlen_q and max_seqlen_k, FlashAttention's names.
        self.varlen = bool(varlen)
        if backward is not None and not self.writes_lse:
            raise TypeError(f"{id}: attnscope_backward is set but attnscope_writes_lse is not: the backward "
                            "reads the forward's LSE")

    def backward_why_not(self, problem):
        return _refusal(self._backward_why_not, problem)

    def writes_lse_for(self, problem):
        """Whether the forward of ``problem`` is given an lse to fill (and checked on it)."""
        if not callable(self.writes_lse):
            return self.writes_lse
        answer = self.writes_lse(dict(problem))
        if not isinstance(answer, bool):
            raise TypeError(f"{self.id}: attnscope_writes_lse(problem) returned {type(answer).__name__}; expected a bool")
        if not answer and self.backward is not None and problem["pass"] != "fwd":
            raise TypeError(f"{self.id}: attnscope_writes_lse(problem) is False for a problem of pass "
                            f"{problem['pass']}: the backward reads the forward's LSE")
        return answer

    def why_not(self, problem):
        return _refusal(self._why_not, problem)

    def prepare(self, problem):
        if self._prepare is not None:
            fn = self._prepare(dict(problem))
            if not callable(fn):
                raise TypeError(f"{self.id}: attnscope_prepare returned {type(fn).__name__}; expected a callable")
            return fn
        return self._fn


class Loaded:
    """What an entry registers: its kernels, a name and the library versions records carry."""

    def __init__(self, name, versions, kernels):
        self.name = name
        self.versions = list(versions)
        self.kernels = list(kernels)


def library_versions(*names):
    """"Python 3.12.3", then "<name> <version>" for each named library that is imported."""
    out = [f"Python {platform.python_version()}"]
    for name in names:
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__version__", None):
            out.append(f"{name} {mod.__version__}")
    return out


def _import_file(path):
    digest = hashlib.sha256(path.encode()).hexdigest()[:12]
    name = f"attnscope_user_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so the file imports its neighbours
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def user_kernel(path, function, kernel_id):
    """The KernelDef of ``function`` in the file ``path``."""
    obj = _import_file(path)
    for part in function.split("."):
        if not hasattr(obj, part):
            raise AttributeError(f"{path} has no attribute '{function}' (--python-kernel FILE.py:FUNC)")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"{path}:{function} is a {type(obj).__name__}, not a callable")
    doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    description = getattr(obj, "attnscope_description", None) or (doc[0] if doc else f"{function} from {path}")
    backward = getattr(obj, "attnscope_backward", None)
    if backward is not None and not callable(backward):
        raise TypeError(f"{path}:{function}.attnscope_backward is a {type(backward).__name__}, not a callable")
    return KernelDef(kernel_id, str(description), fn=obj, why_not=getattr(obj, "attnscope_why_not", None),
                     prepare=getattr(obj, "attnscope_prepare", None), backward=backward,
                     backward_why_not=getattr(obj, "attnscope_backward_why_not", None),
                     writes_lse=getattr(obj, "attnscope_writes_lse", False),
                     compressed_mask=getattr(obj, "attnscope_compressed_mask", False),
                     varlen=getattr(obj, "attnscope_varlen", False))


def load_entry(path, function, kernel_id, backend):
    """An entry's kernels: a user's callable (path set) or a built-in adapter (path empty)."""
    if not path:
        from . import adapters
        return adapters.load(kernel_id, backend)
    kernel = user_kernel(path, function, kernel_id)
    return Loaded("python callable", library_versions("numpy", "torch", "triton"), [kernel])


def _tensors(views, problem, stream):
    """Tensors over the engine's buffers: torch CUDA tensors (torch's current stream made attnscope's,
    so the callable's kernels land where the CUDA events are) or NumPy arrays."""
    if problem["backend"] == "cuda":
        import torch
        if stream:
            torch.cuda.set_stream(torch.cuda.ExternalStream(stream))
        return [None if x is None else torch.from_dlpack(x) for x in views]
    import numpy as np
    return [x if x is None or isinstance(x, np.ndarray) else np.from_dlpack(x) for x in views]


def prefix_sums(lengths):
    out = [0]
    for n in lengths:
        out.append(out[-1] + n)
    return out


def varlen_keywords(problem):
    """FlashAttention's varlen arguments of a varlen problem: cu_seqlens_q and cu_seqlens_k (int32
    prefix sums on the problem's device, or NumPy arrays on the cpu backend), max_seqlen_q and
    max_seqlen_k."""
    lengths = problem["varlen"]
    cu_q, cu_k = prefix_sums(lengths["q"]), prefix_sums(lengths["kv"])
    if problem["backend"] == "cuda":
        import torch
        cu_q, cu_k = (torch.tensor(x, dtype=torch.int32, device="cuda") for x in (cu_q, cu_k))
    else:
        import numpy as np
        cu_q, cu_k = (np.asarray(x, dtype=np.int32) for x in (cu_q, cu_k))
    return dict(cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=problem["seq_q"], max_seqlen_k=problem["seq_kv"])


def _mask_keywords(problem):
    window = problem["window"]
    kw = dict(causal=problem["causal"], window=None if window is None else tuple(window), scale=problem["scale"])
    if problem.get("compress") is not None:  # only kernels with attnscope_compressed_mask get such problems
        kw["compress"] = tuple(problem["compress"])
    if problem.get("varlen") is not None:  # only kernels with attnscope_varlen get such problems
        kw.update(varlen_keywords(problem))
    return kw


def bind(fn, q, k, v, o, lse, problem, stream):
    """``fn`` applied to tensors over the case's buffers, as a call with no arguments; ``lse`` (None
    unless the kernel writes it) is passed as a keyword."""
    tq, tk, tv, to, tlse = _tensors((q, k, v, o, lse), problem, stream)
    extra = {} if tlse is None else {"lse": tlse}
    return functools.partial(fn, tq, tk, tv, out=to, **_mask_keywords(problem), **extra)


def bind_backward(fn, q, k, v, o, lse, do, dq, dk, dv, problem, stream):
    """The kernel's backward applied to the case's buffers, as a call with no arguments."""
    t = _tensors((q, k, v, o, lse, do, dq, dk, dv), problem, stream)
    return functools.partial(fn, *t[:6], dq=t[6], dk=t[7], dv=t[8], **_mask_keywords(problem))


def copy_out_backward(call, result):
    """Puts the gradients the last backward returned, (dq, dk, dv), into attnscope's buffers; nothing
    when it wrote them in place (returned None). Anything else is an error naming what was expected."""
    if result is None:
        return
    targets = (call.keywords["dq"], call.keywords["dk"], call.keywords["dv"])
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        raise TypeError(f"the backward returned {type(result).__name__}; expected None (dq, dk, dv written in place) "
                        "or a tuple (dq, dk, dv)")
    layouts = (("Sq", "Hq", "D"), ("Sk", "Hkv", "D"), ("Sk", "Hkv", "Dv"))
    for name, target, value, (s, h, d) in zip(("dq", "dk", "dv"), targets, result, layouts):
        layout = f"[total_{s[1:]}, {h}, {d}]" if target.ndim == 3 else f"[B, {s}, {h}, {d}]"
        _copy_into(target, value, f"{name} ", layout)


def copy_out(call, result):
    """Puts what the last call returned into O, unless it wrote O in place. A result of the wrong
    type, shape or dtype is an error naming what was expected."""
    o = call.keywords["out"]
    if result is None or result is o:
        return
    _copy_into(o, result, "", "[total_q, Hq, Dv]" if o.ndim == 3 else "[B, Sq, Hq, Dv]")


def _copy_into(target, result, what, layout):
    """Copies ``result`` into the engine's buffer ``target``; ``what`` ("" for O, "dq " ...) and
    ``layout`` name it in errors."""
    if result is target:
        return
    expected = f"{layout} = {tuple(target.shape)}"
    if type(target).__module__.startswith("torch"):
        import torch
        if not isinstance(result, torch.Tensor):
            raise TypeError(f"the kernel returned {what}{type(result).__name__}; expected a torch.Tensor {expected}")
        if tuple(result.shape) != tuple(target.shape):
            raise ValueError(f"the kernel returned {what}shape {tuple(result.shape)}; expected {expected}")
        if result.dtype != target.dtype:
            raise TypeError(f"the kernel returned {what}{result.dtype}; expected {target.dtype} (the problem's dtype)")
        if result.device != target.device:
            raise ValueError(f"the kernel returned {what}a tensor on {result.device}; expected {target.device}")
        if result.data_ptr() != target.data_ptr():
            target.copy_(result)
        return
    import numpy as np
    result = np.asarray(result)
    if result.shape != target.shape:
        raise ValueError(f"the kernel returned {what}shape {result.shape}; expected {expected}")
    np.copyto(target, result, casting="same_kind")
