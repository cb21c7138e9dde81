"""A user's attention kernel for attnscope, written in PyTorch (docs/python.md).

    attnscope run --kernels cudnn.sdpa,mine.sdpa_math --python-kernel examples/python/my_attn.py:attention=mine.sdpa_math \
        --seq 1024,4096 --head-dim 64,128 --causal 0,1

attnscope hands the callable its own BSHD buffers as torch CUDA tensors (q [B, Sq, Hq, D], k and v
[B, Sk, Hkv, D/Dv], out [B, Sq, Hq, Dv]), with torch's current stream set to the one it times.
"""
import torch
import torch.nn.functional as F


def attention(q, k, v, *, causal, window, scale, out=None):
    """SDPA's math backend on attnscope's tensors, the result written into out"""
    sq, sk = q.shape[1], k.shape[1]
    mask = None
    if causal or window is not None:
        # attnscope's masks are bottom-right aligned: query i sees key j <= i + (Sk - Sq).
        diag = torch.arange(sq, device=q.device)[:, None] + (sk - sq)
        j = torch.arange(sk, device=q.device)[None, :]
        mask = torch.ones(sq, sk, dtype=torch.bool, device=q.device)
        if causal:
            mask &= j <= diag
        if window is not None:
            left, right = window
            if left >= 0:
                mask &= j >= diag - left
            if right >= 0:
                mask &= j <= diag + right
    with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.MATH]):
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=mask,
                                           scale=scale, enable_gqa=q.shape[2] != k.shape[2])
    out.copy_(o.transpose(1, 2))


def _why_not(problem):
    # Checked in the worker before anything runs: a refusal is `skipped` with these words.
    if problem["seq_q"] * problem["seq_kv"] > 1 << 28:
        return "the math backend materialises Sq x Sk scores; at most 2^28 per head here"
    return ""


attention.attnscope_why_not = _why_not
