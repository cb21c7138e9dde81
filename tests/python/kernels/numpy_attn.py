"""Python kernels for the CPU tests of the Python door (tests/python/): one right callable in two
styles, and callables that fail in each way a sweep must survive."""
import ctypes

import numpy as np


def _scores(q, k, v, causal, window, scale, compress=None):
    """Masked scaled scores [B, Hq, Sq, Sk] in float64, and K, V repeated over each group's heads."""
    b, sq, hq, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    group = hq // hkv
    kk = np.repeat(k.astype(np.float64), group, axis=2)
    vv = np.repeat(v.astype(np.float64), group, axis=2)
    s = np.einsum("bqhd,bkhd->bhqk", q.astype(np.float64), kk) * scale
    diag = np.arange(sq)[:, None] + (sk - sq)
    j = np.arange(sk)[None, :]
    keep = np.ones((sq, sk), dtype=bool)
    if compress is not None:  # NSA's compressed branch: query i sees block j iff j * d + l - 1 <= i
        block, stride = compress
        keep &= j * stride + block - 1 <= np.arange(sq)[:, None]
    if causal:
        keep &= j <= diag
    if window is not None:
        left, right = window
        if left >= 0:
            keep &= j >= diag - left
        if right >= 0:
            keep &= j <= diag + right
    return np.where(keep, s, -np.inf), kk, vv


def _forward(q, k, v, causal, window, scale, compress=None):
    """(O [B, Sq, Hq, Dv], LSE [B, Hq, Sq]) in float64; rows with no visible key: O = 0, LSE = -inf."""
    s, _, vv = _scores(q, k, v, causal, window, scale, compress)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhqk,bkhd->bqhd", p / np.where(l == 0, 1, l), vv)
    with np.errstate(divide="ignore"):
        lse = np.where(l[..., 0] > 0, m[..., 0] + np.log(l[..., 0]), -np.inf)
    return o, lse


def _reference(q, k, v, causal, window, scale):
    return _forward(q, k, v, causal, window, scale)[0]


def attention(q, k, v, *, causal, window, scale, out=None):
    """Exact attention in NumPy (float64 inside), written into out"""
    out[...] = _reference(q, k, v, causal, window, scale)


def attention_compressed(q, k, v, *, causal, window, scale, out=None, compress=None):
    """Exact attention with NSA's compressed branch, written into out"""
    out[...] = _forward(q, k, v, causal, window, scale, compress)[0]


attention_compressed.attnscope_compressed_mask = True


def attention_varlen(q, k, v, *, causal, window, scale, out=None, cu_seqlens_q=None, cu_seqlens_k=None,
                     max_seqlen_q=None, max_seqlen_k=None):
    """Exact attention over a packed varlen batch, one sequence at a time"""
    assert q.ndim == 3 and out.shape == q.shape[:2] + (v.shape[2],)
    assert max_seqlen_q == max(np.diff(cu_seqlens_q)) and max_seqlen_k == max(np.diff(cu_seqlens_k))
    for b in range(len(cu_seqlens_q) - 1):
        qs, qe, ks, ke = cu_seqlens_q[b], cu_seqlens_q[b + 1], cu_seqlens_k[b], cu_seqlens_k[b + 1]
        out[qs:qe] = _forward(q[None, qs:qe], k[None, ks:ke], v[None, ks:ke], causal, window, scale)[0][0]


attention_varlen.attnscope_varlen = True


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


def attention_with_backward(q, k, v, *, causal, window, scale, out=None, lse=None):
    """Exact attention in NumPy with its LSE and backward"""
    o, l = _forward(q, k, v, causal, window, scale)
    out[...] = o
    lse[...] = l


def _attention_backward(q, k, v, o, lse, do, *, causal, window, scale, dq, dk, dv):
    s, kk, vv = _scores(q, k, v, causal, window, scale)
    lse = lse.astype(np.float64)[..., None]
    p = np.where(np.isfinite(lse), np.exp(s - np.where(np.isfinite(lse), lse, 0.0)), 0.0)
    do64, o64 = do.astype(np.float64), o.astype(np.float64)
    b, sk, hkv = k.shape[0], k.shape[1], k.shape[2]
    group = q.shape[2] // hkv
    dv_full = np.einsum("bhqk,bqhd->bkhd", p, do64)
    dp = np.einsum("bqhd,bkhd->bhqk", do64, vv)
    rowsum = np.einsum("bqhd,bqhd->bhq", do64, o64)[..., None]
    ds = p * (dp - rowsum)
    dq[...] = scale * np.einsum("bhqk,bkhd->bqhd", ds, kk)
    dk_full = scale * np.einsum("bhqk,bqhd->bkhd", ds, q.astype(np.float64))
    dk[...] = dk_full.reshape(b, sk, hkv, group, -1).sum(axis=3)
    dv[...] = dv_full.reshape(b, sk, hkv, group, -1).sum(axis=3)


attention_with_backward.attnscope_writes_lse = True
attention_with_backward.attnscope_backward = _attention_backward


def backward_without_lse(q, k, v, *, causal, window, scale, out=None):
    out[...] = _reference(q, k, v, causal, window, scale)


backward_without_lse.attnscope_backward = _attention_backward


def attention_returning_gradients(q, k, v, *, causal, window, scale, out=None, lse=None):
    """Exact attention returning O (and its backward returning dq, dk, dv), its LSE written only for
    problems whose pass has a backward"""
    o, l = _forward(q, k, v, causal, window, scale)
    if lse is not None:
        lse[...] = l
    return o.astype(np.float32)


def _backward_returning(q, k, v, o, lse, do, *, causal, window, scale, dq, dk, dv):
    grads = [np.zeros_like(x) for x in (dq, dk, dv)]
    _attention_backward(q, k, v, o, lse, do, causal=causal, window=window, scale=scale, dq=grads[0], dk=grads[1],
                        dv=grads[2])
    return tuple(grads)


attention_returning_gradients.attnscope_writes_lse = lambda problem: problem["pass"] != "fwd"
attention_returning_gradients.attnscope_backward = _backward_returning


def backward_returning_wrong_shape(q, k, v, *, causal, window, scale, out=None, lse=None):
    o, l = _forward(q, k, v, causal, window, scale)
    out[...] = o
    lse[...] = l


def _backward_wrong_shape(q, k, v, o, lse, do, *, causal, window, scale, dq, dk, dv):
    return np.zeros_like(dq), np.zeros_like(dk), np.zeros(dv.shape[:-1] + (dv.shape[-1] + 1,), np.float32)


backward_returning_wrong_shape.attnscope_writes_lse = True
backward_returning_wrong_shape.attnscope_backward = _backward_wrong_shape
