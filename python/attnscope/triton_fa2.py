"""triton.fa2: a FlashAttention-2 forward written in Triton for attnscope (Triton 3.x emits wgmma on
Hopper). It reads attnscope's BSHD tensors in place: one program per (query block, batch x query
head), keys streamed in blocks with an online softmax in fp32, grouped-query heads by index, the
causal diagonal bottom-right aligned, sliding windows and Sq != Sk by block bounds plus an element
mask on the edge blocks. D and Dv need not be powers of two (padded and masked)."""
from ._kernels import KernelDef

_kernel = None


def _build():
    import triton
    import triton.language as tl

    @triton.jit
    def fwd(Q, K, V, O, scale_log2, SQ, SK, HQ: tl.constexpr, GROUP: tl.constexpr, D: tl.constexpr,
            DV: tl.constexpr, PD: tl.constexpr, PDV: tl.constexpr, CAUSAL: tl.constexpr, LEFT: tl.constexpr,
            RIGHT: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
        m_block = tl.program_id(0)
        bh = tl.program_id(1)
        b = bh // HQ
        hq = bh % HQ
        hkv = hq // GROUP
        HKV: tl.constexpr = HQ // GROUP
        rows = m_block * BM + tl.arange(0, BM)
        dq = tl.arange(0, PD)
        dv = tl.arange(0, PDV)
        q_ptr = Q + (b * SQ * HQ + hq) * D
        k_ptr = K + (b * SK * HKV + hkv) * D
        v_ptr = V + (b * SK * HKV + hkv) * DV
        q = tl.load(q_ptr + rows[:, None] * (HQ * D) + dq[None, :],
                    mask=(rows[:, None] < SQ) & (dq[None, :] < D), other=0.0)
        m_i = tl.full([BM], float("-inf"), tl.float32)
        l_i = tl.zeros([BM], tl.float32)
        acc = tl.zeros([BM, PDV], tl.float32)
        # The keys this block can see: diag = row + (SK - SQ), key <= diag (causal), diag - LEFT <= key
        # <= diag + RIGHT (window).
        offset = SK - SQ
        lo = 0
        hi = SK
        first_diag = m_block * BM + offset
        last_diag = first_diag + BM - 1
        if CAUSAL:
            hi = tl.minimum(hi, last_diag + 1)
        if RIGHT >= 0:
            hi = tl.minimum(hi, last_diag + RIGHT + 1)
        if LEFT >= 0:
            lo = tl.maximum(0, first_diag - LEFT)
            lo = (lo // BN) * BN
        hi = tl.maximum(hi, 0)
        for start in range(lo, hi, BN):
            cols = start + tl.arange(0, BN)
            k = tl.load(k_ptr + cols[None, :] * (HKV * D) + dq[:, None],
                        mask=(cols[None, :] < SK) & (dq[:, None] < D), other=0.0)
            s = tl.dot(q, k) * scale_log2
            diag = rows[:, None] + offset
            keep = cols[None, :] < SK
            if CAUSAL:
                keep = keep & (cols[None, :] <= diag)
            if LEFT >= 0:
                keep = keep & (cols[None, :] >= diag - LEFT)
            if RIGHT >= 0:
                keep = keep & (cols[None, :] <= diag + RIGHT)
            s = tl.where(keep, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            # A row that has seen no key yet keeps m = -inf: subtract 0 instead, so exp2 gives 0, not NaN.
            m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
            p = tl.math.exp2(s - m_safe[:, None])
            alpha = tl.math.exp2(m_i - m_safe)
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_ptr + cols[:, None] * (HKV * DV) + dv[None, :],
                        mask=(cols[:, None] < SK) & (dv[None, :] < DV), other=0.0)
            acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
            m_i = m_new
        # Rows with no visible key: O = 0, as attnscope's contract says.
        out = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]
        o_ptr = O + (b * SQ * HQ + hq) * DV
        tl.store(o_ptr + rows[:, None] * (HQ * DV) + dv[None, :], out.to(O.dtype.element_ty),
                 mask=(rows[:, None] < SQ) & (dv[None, :] < DV))

    return fwd


def _tiles(width):
    """(BM, BN, warps, stages) by padded head width: fixed choices instead of autotuning, so a sweep
    compiles one configuration per shape (seconds, not minutes)."""
    if width <= 64:
        return 128, 64, 4, 3
    if width <= 128:
        return 128, 64, 8, 3
    return 64, 64, 4, 2


def why_not(problem):
    if problem["backend"] != "cuda":
        return "runs on the cuda backend only"
    if problem["pass"] != "fwd":
        return "forward only (pass = fwd)"
    if problem["dtype"] not in ("fp16", "bf16"):
        return f"dtype {problem['dtype']}: fp16 or bf16 only"
    if max(problem["head_dim"], problem["head_dim_v"]) > 256:
        return f"head_dim {problem['head_dim']}, head_dim_v {problem['head_dim_v']}: at most 256"
    return ""


def prepare(problem):
    global _kernel
    import triton
    if _kernel is None:
        _kernel = _build()
    fwd = _kernel
    b, hq, hkv = problem["batch"], problem["heads_q"], problem["heads_kv"]
    sq, sk, d, dv = problem["seq_q"], problem["seq_kv"], problem["head_dim"], problem["head_dim_v"]
    left, right = problem["window"] if problem["window"] is not None else (-1, -1)
    causal = bool(problem["causal"])
    scale_log2 = problem["scale"] * 1.4426950408889634
    pd, pdv = triton.next_power_of_2(max(d, 16)), triton.next_power_of_2(max(dv, 16))

    bm, bn, warps, stages = _tiles(max(pd, pdv))
    grid = (triton.cdiv(sq, bm), b * hq)

    def call(q, k, v, *, out=None, **_):
        fwd[grid](q, k, v, out, scale_log2, sq, sk, HQ=hq, GROUP=hq // hkv, D=d, DV=dv, PD=pd, PDV=pdv,
                  CAUSAL=causal, LEFT=left, RIGHT=right, BM=bm, BN=bn, num_warps=warps, num_stages=stages)
        return out

    return call


def kernel_def():
    try:
        import triton  # noqa: F401
    except Exception as e:
        raise ImportError(f"Triton not importable: {type(e).__name__}: {e}") from None
    return KernelDef("triton.fa2", "FlashAttention-2 forward in Triton, written for attnscope",
                     why_not=why_not, prepare=prepare)


