"""Python kernels for the CPU tests of the Python door (tests/python/): one right callable in two
styles, and callables that fail in each way a sweep must survive."""
import ctypes

import numpy as np


def _reference(q, k, v, causal, window, scale):
    b, sq, hq, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    group = hq // hkv
    kk = np.repeat(k.astype(np.float64), group, axis=2)
    vv = np.repeat(v.astype(np.float64), group, axis=2)
    s = np.einsum("bqhd,bkhd->bhqk", q.astype(np.float64), kk) * scale
    diag = np.arange(sq)[:, None] + (sk - sq)
    j = np.arange(sk)[None, :]
    keep = np.ones((sq, sk), dtype=bool)
    if causal:
        keep &= j <= diag
    if window is not None:
        left, right = window
        if left >= 0:
            keep &= j >= diag - left
        if right >= 0:
            keep &= j <= diag + right
    s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhqk,bkhd->bqhd", p / np.where(l == 0, 1, l), vv)
    return o


def attention(q, k, v, *, causal, window, scale, out=None):
    """Exact attention in NumPy (float64 inside), written into out"""
    out[...] = _reference(q, k, v, causal, window, scale)


def attention_returning(q, k, v, *, causal, window, scale, out=None):
    return _reference(q, k, v, causal, window, scale).astype(np.float32)


attention_returning.attnscope_id = "mine.returning"


def raises(q, k, v, *, causal, window, scale, out=None):
    raise ValueError("planted failure in the user's kernel")


def wrong_shape(q, k, v, *, causal, window, scale, out=None):
    return np.zeros((1, 2, 3), dtype=np.float32)


def nan_output(q, k, v, *, causal, window, scale, out=None):
    out[...] = np.nan


def segfault(q, k, v, *, causal, window, scale, out=None):
    ctypes.string_at(0)


def full_only(q, k, v, *, causal, window, scale, out=None):
    out[...] = _reference(q, k, v, causal, window, scale)


full_only.attnscope_why_not = lambda problem: "causal masks are not implemented" if problem["causal"] else ""
