"""A user's PyTorch kernel for the GPU tests: SDPA's math written out, GQA by repeat, returning a new
tensor (the engine copies it into O for the check)."""
import torch


def _scores(q, k, causal, window, scale):
    """Masked scaled scores [B, Hq, Sq, Sk] in float32, and the key-head index of each query head."""
    b, sq, hq, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    kh = k.transpose(1, 2).repeat_interleave(hq // hkv, dim=1).float()
    s = (q.transpose(1, 2).float() @ kh.transpose(-1, -2)) * scale
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
    return s.masked_fill(~keep, float("-inf")), kh


def attention(q, k, v, *, causal, window, scale, out=None):
    """Plain PyTorch attention (matmul, mask, softmax, matmul)"""
    hq, hkv = q.shape[2], k.shape[2]
    s, _ = _scores(q, k, causal, window, scale)
    vh = v.transpose(1, 2).repeat_interleave(hq // hkv, dim=1).float()
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return (p @ vh).to(q.dtype).transpose(1, 2)


def attention_with_backward(q, k, v, *, causal, window, scale, out=None, lse=None):
    """Plain PyTorch attention with its LSE and backward, written into attnscope's buffers"""
    hq, hkv = q.shape[2], k.shape[2]
    s, _ = _scores(q, k, causal, window, scale)
    vh = v.transpose(1, 2).repeat_interleave(hq // hkv, dim=1).float()
    lse.copy_(torch.logsumexp(s, dim=-1))
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    out.copy_((p @ vh).to(q.dtype).transpose(1, 2))


def _backward(q, k, v, o, lse, do, *, causal, window, scale, dq, dk, dv):
    b, sq, hq, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    group = hq // hkv
    s, kh = _scores(q, k, causal, window, scale)
    finite = torch.isfinite(lse)[..., None]
    p = torch.where(finite, torch.exp(s - torch.where(finite, lse[..., None], torch.zeros_like(lse[..., None]))),
                    torch.zeros_like(s))
    doh, oh = do.transpose(1, 2).float(), o.transpose(1, 2).float()
    vh = v.transpose(1, 2).repeat_interleave(group, dim=1).float()
    dv_h = p.transpose(-1, -2) @ doh                     # [B, Hq, Sk, Dv]
    dp = doh @ vh.transpose(-1, -2)
    ds = p * (dp - (doh * oh).sum(-1, keepdim=True))
    dq.copy_((scale * ds @ kh).to(dq.dtype).transpose(1, 2))
    dk_h = scale * ds.transpose(-1, -2) @ q.transpose(1, 2).float()
    dk.copy_(dk_h.view(b, hkv, group, sk, d).sum(2).to(dk.dtype).transpose(1, 2))
    dv.copy_(dv_h.view(b, hkv, group, sk, -1).sum(2).to(dv.dtype).transpose(1, 2))


attention_with_backward.attnscope_writes_lse = True
attention_with_backward.attnscope_backward = _backward
