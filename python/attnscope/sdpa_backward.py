"""The backward pass of the SDPA adapters torch.flash, torch.efficient and torch.cudnn, as PyTorch users
run it: for a problem whose pass has a backward, the adapter's forward is F.scaled_dot_product_attention
on inputs that require gradients (the backend forced, as for the forward-only cases), and the backward
is ``torch.autograd.grad`` of that output with ``retain_graph``, which runs the backend's own backward
kernel through autograd. attnscope's LSE is filled from the log-sum-exp autograd saved for the backward
(the public SDPA returns none), so the check sees the forward the backward reads.

The backward hands autograd dO in the output's layout, made once per case outside the timed region,
and returns dq, dk, dv as BSHD views of autograd's gradients, which attnscope copies into its buffers
after the check run only. A timed backward is therefore ``autograd.grad`` alone, what
../shared/tools/anchors.py times; the autograd engine's own work around the kernel (0.05-0.2 ms a
call on an H100) is part of it, as in training. (Calling the backend's aten backward operator
directly, tried first, timed 3% less than the anchors at the median: docs/PERF.md.)

Every mask and head layout the forward adapter takes is taken: autograd differentiates what the
forward ran (an explicit mask, enable_gqa), and a backend that refuses the forward refuses the case in
PyTorch's words. NSA's compressed branch is refused for the backward (its first rows see no key,
whose log-sum-exp the backends do not give as -inf)."""

BACKENDS = ("torch.flash", "torch.efficient", "torch.cudnn")


def backward_why_not(problem):
    if problem.get("compress") is not None:
        return "compress: the SDPA adapters' backward does not take NSA's compressed branch"
    return ""


def writes_lse(problem):
    """The adapters write the LSE (and build autograd's graph) only where a backward reads it."""
    return problem["pass"] != "fwd"


class Saved:
    """The last forward of a backward-pass case: its inputs (leaves that require gradients) and its
    output, whose graph autograd keeps; and dO in the output's layout, made at the first backward."""

    def __init__(self):
        self.clear()

    def clear(self):
        """Drops the last case's graph and tensors (a new case is being prepared)."""
        self.inputs = None
        self.out = None
        self._do_key = None
        self._do = None

    def grad_out(self, do):
        if self._do_key is not do:
            import torch
            self._do_key = do
            self._do = torch.empty_like(self.out).copy_(do.transpose(1, 2))
        return self._do


def _saved_lse(grad_fn):
    """The log-sum-exp SDPA's autograd node saved for the backward: [B, H, Sq] (flash), [B, H, Sq, 1]
    (cuDNN) or [B, H, Sq rounded up to 32] (memory-efficient)."""
    for name in dir(grad_fn):
        if name.startswith("_saved_") and "sumexp" in name:
            return getattr(grad_fn, name)
    raise RuntimeError(f"PyTorch's {type(grad_fn).__name__} saved no log-sum-exp for the backward; saved: "
                       + ", ".join(n for n in dir(grad_fn) if n.startswith("_saved_")))


def forward_with_lse(sdpa, q, k, v, lse_out, saved):
    """``sdpa(q, k, v)`` (the forced-backend SDPA) on BHSD leaves that require gradients; writes
    attnscope's LSE [B, Hq, Sq] and returns O as a BSHD view."""
    if saved.inputs is None or any(a is not b for a, b in zip(saved.inputs[3:], (q, k, v))):
        saved.inputs = tuple(x.detach().requires_grad_() for x in (q, k, v)) + (q, k, v)
    import torch
    qg, kg, vg = saved.inputs[:3]
    with torch.enable_grad():
        out = sdpa(qg, kg, vg)
    lse = _saved_lse(out.grad_fn)
    lse_out.copy_(lse.reshape(lse.shape[0], lse.shape[1], -1)[..., :q.shape[2]])
    saved.out = out
    return out.detach().transpose(1, 2)


def backward(kernel_id, do, saved):
    """autograd's backward of the last forward; returns (dq, dk, dv) as BSHD views."""
    import torch
    if saved.out is None:
        raise RuntimeError(f"{kernel_id}: the backward ran before any forward of this case")
    grads = torch.autograd.grad(saved.out, saved.inputs[:3], saved.grad_out(do), retain_graph=True)
    return tuple(x.transpose(1, 2) for x in grads)
