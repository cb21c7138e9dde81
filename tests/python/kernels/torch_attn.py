"""A user's PyTorch kernel for the GPU tests: SDPA's math written out, GQA by repeat, returning a new
tensor (the engine copies it into O for the check)."""
import torch


def attention(q, k, v, *, causal, window, scale, out=None):
    """Plain PyTorch attention (matmul, mask, softmax, matmul)"""
    b, sq, hq, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    qh, kh, vh = (x.transpose(1, 2) for x in (q, k, v))
    kh = kh.repeat_interleave(hq // hkv, dim=1)
    vh = vh.repeat_interleave(hq // hkv, dim=1)
    s = (qh.float() @ kh.float().transpose(-1, -2)) * scale
    diag = torch.arange(sq, device=q.device)[:, None] + (sk - sq)
    j = torch.arange(sk, device=q.device)[None, :]
    keep = torch.ones(sq, sk, dtype=torch.bool, device=q.device)
    if causal:
        keep &= j <= diag
    if window is not None:
        if window[0] >= 0:
            keep &= j >= diag - window[0]
        if window[1] >= 0:
            keep &= j <= diag + window[1]
    p = torch.softmax(s.masked_fill(~keep, float("-inf")), dim=-1).nan_to_num(0.0)
    return (p @ vh.float()).to(q.dtype).transpose(1, 2)
