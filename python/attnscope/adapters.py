"""Built-in Python adapters: PyTorch's SDPA backends (torch.flash, torch.efficient, torch.cudnn,
torch.math, each forced with sdpa_kernel), FlexAttention (torch.flex: compiled once per process,
its block mask built per problem shape in prepare, so compilation is the case's `prepare` phase,
never its kernel time; a varlen batch is one sequence of all its tokens under a document mask),
torch.varlen (varlen_attn on packed rows) and triton.fa2, this project's
Triton FlashAttention-2 forward. Each SDPA and Flex adapter takes contiguous BHSD copies of
attnscope's BSHD inputs, made once per case outside the timed region (their native layout, as
PyTorch users call them); torch.varlen reads the rows as they are. Each returns a new tensor; the
engine copies it into O for the check only. torch.flash, torch.efficient and torch.cudnn also have a
backward (torch.autograd.grad of the same SDPA, as training runs it: sdpa_backward.py)."""
import math
import warnings

from ._kernels import KernelDef, Loaded, Unsupported, library_versions

SDPA_BACKENDS = {
    "torch.flash": ("FLASH_ATTENTION", "PyTorch SDPA, FlashAttention-2 backend (forced)"),
    "torch.efficient": ("EFFICIENT_ATTENTION", "PyTorch SDPA, memory-efficient (xFormers) backend (forced)"),
    "torch.cudnn": ("CUDNN_ATTENTION", "PyTorch SDPA, cuDNN backend (forced)"),
    "torch.math": ("MATH", "PyTorch SDPA, math backend (unfused, forced)"),
}
FLEX = "torch.flex"
VARLEN = "torch.varlen"
TRITON = "triton.fa2"
ADAPTERS = list(SDPA_BACKENDS) + [FLEX, VARLEN, TRITON]


def _import_torch():
    try:
        import torch  # noqa: F401
    except Exception as e:  # ImportError, or a broken CUDA install
        raise ImportError(f"PyTorch not importable: {type(e).__name__}: {e}") from None
    return torch


def availability():
    """[{id, available, why}] for every adapter: why is the import error of a missing library."""
    out = []
    for kernel_id in ADAPTERS:
        try:
            _import_torch()
            if kernel_id == TRITON:
                try:
                    import triton  # noqa: F401
                except Exception as e:
                    raise ImportError(f"Triton not importable: {type(e).__name__}: {e}") from None
            out.append({"id": kernel_id, "available": True, "why": ""})
        except ImportError as e:
            out.append({"id": kernel_id, "available": False, "why": str(e)})
    return out


def _cuda_only(problem):
    if problem["backend"] != "cuda":
        return "runs on the cuda backend only (PyTorch CUDA tensors)"
    return ""


def _bhsd(x):
    """A view: BSHD memory in BHSD indexing; a varlen batch's packed [total, H, D] rows as one
    sequence [1, H, total, D]."""
    return (x.unsqueeze(0) if x.dim() == 3 else x).transpose(1, 2)


class _BhsdInputs:
    """Contiguous BHSD copies of a case's BSHD inputs, made at the case's first call (the check run,
    never a timed one) and reused while the engine passes the same tensors. BHSD is the layout
    PyTorch users hand SDPA and FlexAttention and the one their backends are tuned for (cuDNN picks
    other engines for BSHD strides: up to 20% slower at D 256, S 2048 on the H100), so the adapters
    measure the backends as users call them."""

    def __init__(self):
        self._key = None
        self._inputs = None

    def __call__(self, q, k, v):
        if self._key is None or self._key[0] is not q or self._key[1] is not k or self._key[2] is not v:
            self._key = (q, k, v)
            self._inputs = tuple(_bhsd(x).contiguous() for x in (q, k, v))
        return self._inputs


def _sdpa_mask(problem):
    """(is_causal, attn_mask) for SDPA: a bottom-right causal mask of a non-square problem and any
    sliding window or NSA's compressed branch need an explicit mask (which the flash and cudnn backends
    refuse)."""
    import torch
    sq, sk = problem["seq_q"], problem["seq_kv"]
    window = problem["window"]
    if problem.get("compress") is not None:  # query i sees compressed block j iff j * d + l - 1 <= i
        block, stride = problem["compress"]
        i = torch.arange(sq, device="cuda")[:, None]
        j = torch.arange(sk, device="cuda")[None, :]
        return False, j * stride + block - 1 <= i
    if window is None:
        if not problem["causal"]:
            return False, None
        if sq == sk:
            return True, None
        from torch.nn.attention.bias import causal_lower_right
        return False, causal_lower_right(sq, sk)
    i = torch.arange(sq, device="cuda")[:, None] + (sk - sq)
    j = torch.arange(sk, device="cuda")[None, :]
    keep = torch.ones(sq, sk, dtype=torch.bool, device="cuda")
    left, right = window
    if left >= 0:
        keep &= j >= i - left
    if right >= 0:
        keep &= j <= i + right
    if problem["causal"]:
        keep &= j <= i
    return False, keep


def _sdpa(kernel_id):
    torch = _import_torch()
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from . import sdpa_backward
    backend = getattr(SDPBackend, SDPA_BACKENDS[kernel_id][0])
    has_backward = kernel_id in sdpa_backward.BACKENDS
    saved = sdpa_backward.Saved()

    def prepare(problem):
        saved.clear()  # the previous case's autograd graph holds its inputs and output
        is_causal, mask = _sdpa_mask(problem)
        gqa = problem["heads_q"] != problem["heads_kv"]
        scale = problem["scale"]
        views = _BhsdInputs()
        checked = []

        def call(q, k, v, **_):
            qh, kh, vh = views(q, k, v)
            with sdpa_kernel([backend]):
                o = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=mask, is_causal=is_causal, scale=scale,
                                                   enable_gqa=gqa)
            return o.transpose(1, 2)

        if has_backward and sdpa_backward.writes_lse(problem):
            # A pass with a backward: the same SDPA on inputs that require gradients, as in training.
            def sdpa(qg, kg, vg):
                with sdpa_kernel([backend]):
                    return F.scaled_dot_product_attention(qg, kg, vg, attn_mask=mask, is_causal=is_causal, scale=scale,
                                                          enable_gqa=gqa)

            def call(q, k, v, lse=None, **_):  # noqa: F811
                return sdpa_backward.forward_with_lse(sdpa, *views(q, k, v), lse, saved)

        def first_call(q, k, v, **kw):
            # PyTorch says why a forced backend refuses a problem in warnings, then raises: the case is
            # skipped with those words. Later calls go straight to `call`.
            if checked:
                return call(q, k, v, **kw)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    o = call(q, k, v, **kw)
                except RuntimeError as e:
                    why = "; ".join(str(w.message).strip() for w in caught if "kernel" in str(w.message).lower())
                    raise Unsupported(f"PyTorch refuses {kernel_id}: {why or e}") from None
            checked.append(True)
            return o

        return first_call

    description = SDPA_BACKENDS[kernel_id][1]
    # The masked-SDPA baselines of NSA's compressed branch: the backends that take an explicit mask.
    explicit_mask = kernel_id in ("torch.math", "torch.efficient")
    if not has_backward:
        return KernelDef(kernel_id, description, why_not=_cuda_only, prepare=prepare, compressed_mask=explicit_mask)

    def backward(q, k, v, o, lse, do, **_):
        return sdpa_backward.backward(kernel_id, do, saved)

    return KernelDef(kernel_id, description + "; backward: torch.autograd.grad of it", why_not=_cuda_only,
                     prepare=prepare, compressed_mask=explicit_mask, backward=backward,
                     backward_why_not=sdpa_backward.backward_why_not, writes_lse=sdpa_backward.writes_lse)


def _flex():
    torch = _import_torch()
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    compiled = {}

    def varlen_mask_mod(problem):
        """Document masking over the packed rows seen as one sequence: query and key in the same
        sequence, then the mask within it, bottom-right aligned per sequence."""
        from ._kernels import prefix_sums
        lengths = problem["varlen"]
        causal, window, compress = problem["causal"], problem["window"], problem.get("compress")
        left, right = window if window is not None else (-1, -1)
        ints = dict(dtype=torch.int32, device="cuda")
        cu_q, cu_k = (torch.tensor(prefix_sums(lengths[x]), **ints) for x in ("q", "kv"))
        doc_q, doc_k = (torch.repeat_interleave(torch.arange(len(lengths[x]), **ints),
                                                torch.tensor(lengths[x], device="cuda"))
                        for x in ("q", "kv"))

        def mask_mod(b, h, q_idx, kv_idx):
            dq, dk = doc_q[q_idx], doc_k[kv_idx]
            diag = (q_idx - cu_q[dq]) + (cu_k[dq + 1] - cu_k[dq]) - (cu_q[dq + 1] - cu_q[dq])
            kpos = kv_idx - cu_k[dk]
            keep = dq == dk
            if causal:
                keep = keep & (kpos <= diag)
            if left >= 0:
                keep = keep & (kpos >= diag - left)
            if right >= 0:
                keep = keep & (kpos <= diag + right)
            if compress is not None:  # NSA's compressed branch: key kpos is block kpos of the sequence
                keep = keep & (kpos * compress[1] + compress[0] - 1 <= q_idx - cu_q[dq])
            return keep
        return mask_mod

    def mask_mod_of(problem):
        offset = problem["seq_kv"] - problem["seq_q"]
        causal, window = problem["causal"], problem["window"]
        left, right = window if window is not None else (-1, -1)
        if problem.get("varlen") is not None:
            return varlen_mask_mod(problem)
        if problem.get("compress") is not None:
            block, stride = problem["compress"]
            return lambda b, h, q_idx, kv_idx: kv_idx * stride + block - 1 <= q_idx

        def mask_mod(b, h, q_idx, kv_idx):
            diag = q_idx + offset
            keep = kv_idx >= 0
            if causal:
                keep = keep & (kv_idx <= diag)
            if left >= 0:
                keep = keep & (kv_idx >= diag - left)
            if right >= 0:
                keep = keep & (kv_idx <= diag + right)
            return keep
        return mask_mod

    def prepare(problem):
        if "fn" not in compiled:
            compiled["fn"] = torch.compile(flex_attention, dynamic=False)
        flex = compiled["fn"]
        varlen = problem.get("varlen") is not None
        # A varlen batch: its packed rows as one sequence of all the tokens, masked per document.
        sq = sum(problem["varlen"]["q"]) if varlen else problem["seq_q"]
        sk = sum(problem["varlen"]["kv"]) if varlen else problem["seq_kv"]
        full = not varlen and not problem["causal"] and problem["window"] is None and problem.get("compress") is None
        block_mask = None if full else create_block_mask(mask_mod_of(problem), None, None, sq, sk, device="cuda")
        gqa = problem["heads_q"] != problem["heads_kv"]
        scale = problem["scale"]
        dtype = getattr(torch, {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}[problem["dtype"]])

        views = _BhsdInputs()

        def call(q, k, v, **_):
            o = flex(*views(q, k, v), block_mask=block_mask, scale=scale, enable_gqa=gqa).transpose(1, 2)
            return o[0] if varlen else o

        # Compile now, for this shape, so the case's prepare phase holds the compile time.
        b, hq, hkv = problem["batch"], problem["heads_q"], problem["heads_kv"]
        d, dv = problem["head_dim"], problem["head_dim_v"]
        lead = () if varlen else (b,)
        warm = [torch.empty(*lead, s, h, e, device="cuda", dtype=dtype).normal_()
                for s, h, e in ((sq, hq, d), (sk, hkv, d), (sk, hkv, dv))]
        try:
            call(*warm)
        except Exception as e:
            raise Unsupported(f"FlexAttention refuses this problem: {type(e).__name__}: {str(e).splitlines()[0]}")
        torch.cuda.synchronize()
        del warm
        views.__init__()  # drop the warm-up tensors
        return call

    return KernelDef(FLEX, "PyTorch FlexAttention (torch.compile, block masks for causal, windows, NSA's "
                     "compressed branch and varlen batches as document masks)", why_not=_cuda_only, prepare=prepare,
                     compressed_mask=True, varlen=True)


def _varlen():
    """torch.nn.attention.varlen.varlen_attn: PyTorch's FlashAttention-2 varlen forward on attnscope's
    packed rows as they are (its native [total, H, D] layout: no copy), prefix sums made in prepare.
    A dense problem runs as a varlen batch of equal lengths. The signature changed across PyTorch
    releases (is_causal, then window_size and scale, then enable_gqa): it is read once, and what the
    installed one cannot say is refused with the reason."""
    torch = _import_torch()
    import inspect
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError as e:
        raise ImportError(f"torch.nn.attention.varlen not in PyTorch {torch.__version__}: {e}") from None
    params = inspect.signature(varlen_attn).parameters
    from ._kernels import prefix_sums

    def why_not(problem):
        why = _cuda_only(problem)
        if why:
            return why
        if problem["dtype"] not in ("fp16", "bf16"):
            return f"dtype = {problem['dtype']}: varlen_attn (FlashAttention-2) takes fp16 and bf16"
        if problem.get("compress") is not None:
            return "compress: varlen_attn has no NSA compressed-branch mask"
        if problem["window"] is not None and "window_size" not in params:
            return f"window: varlen_attn of PyTorch {torch.__version__} has no window_size"
        if problem["heads_q"] != problem["heads_kv"] and "enable_gqa" not in params:
            return (f"heads_kv = {problem['heads_kv']} < heads_q = {problem['heads_q']}: varlen_attn of PyTorch "
                    f"{torch.__version__} has no enable_gqa")
        return ""

    def prepare(problem):
        lengths = problem["varlen"] or {"q": [problem["seq_q"]] * problem["batch"],
                                        "kv": [problem["seq_kv"]] * problem["batch"]}
        cu_q, cu_k = (torch.tensor(prefix_sums(lengths[x]), dtype=torch.int32, device="cuda") for x in ("q", "kv"))
        max_q, max_k = max(lengths["q"]), max(lengths["kv"])
        kw = {}
        left, right = problem["window"] if problem["window"] is not None else (-1, -1)
        if problem["causal"]:
            right = 0 if right < 0 else min(right, 0)
        if "window_size" in params:
            kw["window_size"] = (left, right)
        else:
            kw["is_causal"] = right == 0
        if "scale" in params:
            kw["scale"] = problem["scale"]
        elif abs(problem["scale"] - problem["head_dim"] ** -0.5) > 1e-12:
            raise Unsupported("scale: varlen_attn of this PyTorch takes the default scale only")
        if "enable_gqa" in params and problem["heads_q"] != problem["heads_kv"]:
            kw["enable_gqa"] = True

        def call(q, k, v, **_):
            shape = q.shape[:-1] + (v.shape[-1],)
            packed = [x.reshape(-1, x.shape[-2], x.shape[-1]) for x in (q, k, v)]
            return varlen_attn(*packed, cu_q, cu_k, max_q, max_k, **kw).reshape(shape)

        checked = []

        def first_call(q, k, v, **kwargs):
            if checked:
                return call(q, k, v)
            try:
                o = call(q, k, v)
            except RuntimeError as e:
                raise Unsupported(f"PyTorch refuses {VARLEN}: {str(e).splitlines()[0]}") from None
            checked.append(True)
            return o

        return first_call

    return KernelDef(VARLEN, "PyTorch varlen_attn (FlashAttention-2 varlen forward on packed rows; causal, "
                     "windows where the installed PyTorch has window_size)", why_not=why_not, prepare=prepare,
                     varlen=True)


def load(kernel_id, backend):
    """The Loaded entry of adapter ``kernel_id``; ImportError when its library is missing."""
    if kernel_id in SDPA_BACKENDS:
        kernel = _sdpa(kernel_id)
    elif kernel_id == FLEX:
        kernel = _flex()
    elif kernel_id == VARLEN:
        kernel = _varlen()
    elif kernel_id == TRITON:
        from . import triton_fa2
        kernel = triton_fa2.kernel_def()
    else:
        raise KeyError(f"no Python adapter '{kernel_id}'; adapters: {', '.join(ADAPTERS)}")
    family = "triton" if kernel_id == TRITON else "torch"
    versions = library_versions("torch", "triton")
    try:
        import torch
        if torch.backends.cudnn.is_available():
            versions.append(f"cuDNN {torch.backends.cudnn.version()} (PyTorch's)")
    except RuntimeError as e:  # PyTorch refuses a cuDNN of another version found first (LD_LIBRARY_PATH)
        versions.append(f"cuDNN unusable by PyTorch: {str(e).split('. ')[0]}")
    return Loaded(f"{family} adapter", versions, [kernel])
