"""The backward pass of the SDPA adapters torch.flash, torch.efficient and torch.cudnn: PyTorch's own
backward kernels, called as autograd calls them for F.scaled_dot_product_attention, through the aten
operators each backend's autograd formula uses. The public SDPA returns no log-sum-exp, so for a
problem whose pass has a backward the adapter's forward calls the backend's aten forward, which
returns it (the same kernel SDPA runs under autograd), and writes attnscope's LSE from it.

The backward hands PyTorch the forward's own tensors (its BHSD inputs, its output and log-sum-exp in
the layouts the backend chose: the values of attnscope's O and LSE) and dO in the output's layout,
made once per case outside the timed region; it returns dq, dk, dv as BSHD views of PyTorch's
gradients, which attnscope copies into its buffers after the check run only. So a timed backward is
the aten backward alone, as ``torch.autograd.grad`` runs it.

Taken: full masks and causal masks with Sq = Sk (PyTorch's ``is_causal`` is top-left aligned, which is
attnscope's bottom-right one only there), MHA. Windows, other causal masks, GQA/MQA and NSA's
compressed branch need an explicit mask or head expansion, whose backward autograd builds around the
kernel: refused with that reason."""

BACKENDS = ("torch.flash", "torch.efficient", "torch.cudnn")


def backward_why_not(problem):
    if problem["window"] is not None:
        return "window: the SDPA adapters' backward takes full and causal masks only (no explicit mask)"
    if problem.get("compress") is not None:
        return "compress: the SDPA adapters' backward takes full and causal masks only (no explicit mask)"
    if problem["causal"] and problem["seq_q"] != problem["seq_kv"]:
        return (f"causal with seq_q = {problem['seq_q']} != seq_kv = {problem['seq_kv']}: PyTorch's is_causal is "
                "top-left aligned; the SDPA adapters' backward takes causal masks with seq_q = seq_kv only")
    if problem["heads_q"] != problem["heads_kv"]:
        return (f"heads_kv = {problem['heads_kv']} < heads_q = {problem['heads_q']}: the SDPA adapters' backward "
                "runs MHA only")
    return ""


def writes_lse(problem):
    """The adapters write the LSE (and call the aten forward) only where a backward reads it."""
    return problem["pass"] != "fwd"


class Saved:
    """What the last forward of a backward-pass case left for the backward: the BHSD inputs, the
    output, the log-sum-exp and the backend's extra outputs; and dO in the output's layout, made at the
    first backward of the case."""

    def __init__(self):
        self.forward = None  # (q, k, v, out, lse, extra, is_causal, scale)
        self._do_key = None
        self._do = None

    def grad_out(self, do, out):
        if self._do_key is not do:
            import torch
            self._do_key = do
            self._do = torch.empty_like(out).copy_(do.transpose(1, 2))  # the output's strides
        return self._do


def forward_with_lse(kernel_id, q, k, v, is_causal, scale, lse_out, saved):
    """The backend's aten forward on BHSD q, k, v; writes attnscope's LSE [B, Hq, Sq] and returns O as a
    BSHD view."""
    import torch
    aten = torch.ops.aten
    if kernel_id == "torch.flash":
        r = aten._scaled_dot_product_flash_attention(q, k, v, 0.0, is_causal, False, scale=scale)
        out, lse, extra = r[0], r[1], (r[2], r[3], r[4], r[5], r[6], r[7])
    elif kernel_id == "torch.cudnn":
        r = aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, is_causal, False, scale=scale)
        out, lse, extra = r[0], r[1], (r[2], r[3], r[4], r[5], r[6], r[7])
    elif kernel_id == "torch.efficient":
        r = aten._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, is_causal, scale=scale)
        out, lse, extra = r[0], r[1], (r[2], r[3])
    else:
        raise KeyError(f"no SDPA backward for {kernel_id}")
    # cuDNN's is [B, H, Sq, 1]; the memory-efficient kernel's rows are padded to a multiple of 32.
    sq = q.shape[2]
    lse_out.copy_(lse.reshape(lse.shape[0], lse.shape[1], -1)[..., :sq])
    saved.forward = (q, k, v, out, lse, extra, is_causal, scale)
    return out.transpose(1, 2)


def backward(kernel_id, do, saved):
    """PyTorch's backward of the last forward; returns (dq, dk, dv) as BSHD views."""
    import torch
    aten = torch.ops.aten
    if saved.forward is None:
        raise RuntimeError(f"{kernel_id}: the backward ran before any forward of this case")
    q, k, v, out, lse, extra, is_causal, scale = saved.forward
    g = saved.grad_out(do, out)
    if kernel_id == "torch.flash":
        cum_q, cum_k, max_q, max_k, seed, offset = extra
        grads = aten._scaled_dot_product_flash_attention_backward(g, q, k, v, out, lse, cum_q, cum_k, max_q, max_k,
                                                                  0.0, is_causal, seed, offset, scale=scale)
    elif kernel_id == "torch.cudnn":
        cum_q, cum_k, max_q, max_k, seed, offset = extra
        grads = aten._scaled_dot_product_cudnn_attention_backward(g, q, k, v, out, lse, seed, offset, None, cum_q,
                                                                  cum_k, max_q, max_k, 0.0, is_causal, scale=scale)
    else:
        seed, offset = extra
        grads = aten._scaled_dot_product_efficient_attention_backward(g, q, k, v, None, out, lse, seed, offset, 0.0,
                                                                      [True, True, True, False], is_causal,
                                                                      scale=scale)
    return tuple(x.transpose(1, 2) for x in grads[:3])
