"""The Python door on a GPU (label gpu; run on the device, docs/VALIDATION.md): the PyTorch and
Triton adapters and a user's torch callable run in Python workers through the same check, timing
and CUPTI metrics as cudnn.sdpa."""
import os

import pytest

import attnscope

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch", reason="PyTorch is not importable here")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to PyTorch", allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_KERNEL = os.path.join(HERE, "kernels", "torch_attn.py")


def test_adapters_pass_the_check_with_metrics(tmp_path):
    kernels = ["cudnn.sdpa", "torch.flash", "torch.efficient", "torch.cudnn", "torch.math", "triton.fa2"]
    rows = attnscope.run(kernels=kernels, out=tmp_path / "run", batch=2, heads=4, heads_kv=[4, 2], seq=[384],
                         head_dim=[64, 128], causal=[0, 1], args=["--max-time-s", "0.05"])
    got = {}
    for r in rows:
        got.setdefault(r["kernel"], []).append(r)
    for k in kernels:
        assert len(got[k]) == 8, k
        for r in got[k]:
            if k == "torch.efficient" and r["problem.heads_kv"] != r["problem.heads_q"]:
                # PyTorch's memory-efficient backend takes no enable_gqa: skipped in its own words.
                assert r["status"] == "skipped" and r["reason"].startswith("PyTorch refuses torch.efficient: ")
                continue
            assert r["status"] == "ok", (k, r.get("reason"))
            assert r["correctness.pass"] is True
            assert r["metrics.tensor_pipe_pct"] > 0, k


def test_windows_flex_and_refusals(tmp_path):
    # FlexAttention compiles once per problem shape (in prepare): few shapes, each causal or windowed.
    rows = attnscope.run(kernels=["torch.flex", "triton.fa2", "torch.flash", "cudnn.sdpa"], out=tmp_path / "run",
                         batch=1, heads=4, heads_kv=2, seq_q=[512], seq_kv=[512, 640], head_dim=64, causal=[1],
                         window=[None, (128, 0)], args=["--max-time-s", "0.05"])
    for r in rows:
        if r["kernel"] == "torch.flash" and "problem.window" in r and r["problem.window"] != [-1, -1]:
            assert r["status"] == "skipped" and "PyTorch refuses torch.flash" in r["reason"]
        else:
            assert r["status"] == "ok", (r["kernel"], r.get("reason"))
            assert r["correctness.pass"] is True
    flex = [r for r in rows if r["kernel"] == "torch.flex"]
    assert len(flex) == 4 and all(r["phases.prepare_s"] > 0 for r in flex)
    assert all(r["metrics.tensor_pipe_pct"] > 0 for r in flex)


def test_nsa_compressed_branch_masked_sdpa_and_flex(tmp_path):
    # NSA's compressed branch: the adapters with an explicit or block mask take it (the first l - 1
    # rows see no block and must give 0, not NaN); flash and cudnn (no explicit mask) are skipped.
    kernels = ["fa2.mma", "torch.efficient", "torch.math", "torch.flex", "torch.flash", "cudnn.sdpa"]
    rows = attnscope.run(kernels=kernels, out=tmp_path / "run", batch=2, heads=4, seq=[512, 1000], head_dim=64,
                         compress=[(32, 16), (64, 64)], args=["--max-time-s", "0.05"])
    assert len(rows) == len(kernels) * 4
    for r in rows:
        assert r["problem.compress"] in ([32, 16], [64, 64]), r
        if r["kernel"] in ("torch.flash", "cudnn.sdpa"):
            assert r["status"] == "skipped" and "does not implement NSA's compressed-branch mask" in r["reason"]
        else:
            assert r["status"] == "ok", (r["kernel"], r.get("reason"))
            assert r["correctness.pass"] is True


def test_nsa_compressed_branch_of_a_varlen_batch(tmp_path):
    # NSA's compressed branch per sequence of a varlen batch (each sequence's keys its own blocks):
    # fa2.mma packed, FlexAttention's document mask with the compressed rule, and dense buckets of
    # fa2.mma and cublas.unfused, all checked against the same reference; varlen_attn has no such mask.
    kernels = ["fa2.mma", "torch.flex", ("fa2.mma", {"bucket": 128}), ("cublas.unfused", {"bucket": 128}),
               "torch.varlen"]
    rows = attnscope.run(kernels=kernels, out=tmp_path / "run", batch=6, heads=4, seq=1024, head_dim=64,
                         compress=[(32, 16)], varlen=["uniform:16@3"], args=["--max-time-s", "0.05"])
    assert len(rows) == len(kernels)
    for r in rows:
        assert r["problem.compress"] == [32, 16], r
        if r["kernel"] == "torch.varlen":
            assert r["status"] == "skipped" and "compress" in r["reason"], r
        else:
            assert r["status"] == "ok", (r["kernel"], r.get("reason"))
            assert r["correctness.pass"] is True


def test_varlen_packed_adapters_and_buckets(tmp_path):
    # A varlen batch: fa2.mma, cudnn.sdpa, PyTorch's varlen_attn and FlexAttention (a document mask
    # over the packed rows) read the packed rows; torch.flash and cudnn.sdpa also run it dense-bucketed.
    # Every case checked against the same reference; GQA only where the installed varlen_attn can say
    # so (else skipped with the reason).
    kernels = ["fa2.mma", "cudnn.sdpa", "torch.varlen", "torch.flex", ("torch.flash", {"bucket": 128}),
               ("cudnn.sdpa", {"bucket": 64})]
    rows = attnscope.run(kernels=kernels, out=tmp_path / "run", batch=9, heads=8, heads_kv=[8, 2], seq=[1000],
                         head_dim=[64, 128], causal=[1], varlen=["lognormal:300:0.9@5"],
                         args=["--max-time-s", "0.05"])
    assert len(rows) == 6 * 4
    for r in rows:
        assert len(r["problem.varlen.q"]) == 9
        if r["kernel"] == "torch.varlen" and r["status"] == "skipped":
            assert r["problem.heads_kv"] == 2 and "enable_gqa" in r["reason"], r["reason"]
            continue
        assert r["status"] == "ok", (r["kernel"], r.get("variant"), r.get("reason"))
        assert r["correctness.pass"] is True
        assert ("padding_waste" in r) == ("variant" in r), r.get("variant")


def test_user_torch_callable(tmp_path):
    rows = attnscope.run(kernels=["cudnn.sdpa", "user.torch"], out=tmp_path / "run", batch=1, heads=4, heads_kv=2,
                         seq=[256], head_dim=64, causal=[0, 1],
                         args=["--python-kernel", TORCH_KERNEL + ":attention=user.torch"])
    user = [r for r in rows if r["kernel"] == "user.torch"]
    assert [r["status"] for r in user] == ["ok", "ok"]
    assert all(r["correctness.pass"] for r in user)


def test_user_torch_backward(tmp_path):
    rows = attnscope.run(kernels=["cudnn.sdpa", "user.grad"], out=tmp_path / "run", batch=1, heads=4, heads_kv=[4, 2],
                         seq_q=[200], seq_kv=[200, 333], head_dim=64, causal=[0, 1], pass_=["fwd", "bwd", "fwd+bwd"],
                         args=["--python-kernel", TORCH_KERNEL + ":attention_with_backward=user.grad", "--metrics",
                               "none"])
    user = [r for r in rows if r["kernel"] == "user.grad"]
    assert len(user) == 2 * 2 * 2 * 3
    for r in user:
        assert r["status"] == "ok", r.get("reason")
        if r.get("problem.pass", "fwd") != "fwd":
            assert all(r[f"grad_check.{g}.pass"] for g in ("dq", "dk", "dv")), r


def test_sdpa_adapters_backward_is_checked_like_cudnn(tmp_path):
    # torch.autograd.grad of the forced-backend SDPA, as training runs it: gradients checked like
    # cudnn.sdpa's; GQA and a window go through autograd where the backend takes the forward.
    kernels = ["cudnn.sdpa", "torch.flash", "torch.efficient", "torch.cudnn", "torch.math"]
    rows = attnscope.run(kernels=kernels, out=tmp_path / "run", batch=2, heads=4, heads_kv=[4, 2], seq=[384],
                         head_dim=[64], causal=[0, 1], pass_=["bwd", "fwd+bwd"], args=["--max-time-s", "0.05"])
    ok = 0
    for r in rows:
        k = r["kernel"]
        if k == "torch.math":
            assert r["status"] == "skipped" and "has no backward pass" in r["reason"], r.get("reason")
            continue
        if r["status"] == "skipped":  # cudnn.sdpa's own refusals, or PyTorch's (efficient takes no GQA)
            assert k == "cudnn.sdpa" or r["reason"].startswith(f"PyTorch refuses {k}: "), (k, r["reason"])
            continue
        assert r["status"] == "ok", (k, r.get("reason"))
        assert r["correctness.pass"] is True
        for g in ("dq", "dk", "dv"):
            assert r[f"grad_check.{g}.pass"] is True, (k, g, r[f"grad_check.{g}.rel_l2"])
        assert r["metrics.tensor_pipe_pct"] > 0, k
        ok += k.startswith("torch.")
    # Every MHA case of the three backends, at least.
    assert ok >= 3 * 2 * 2
    window = attnscope.run(kernels=["torch.efficient"], out=tmp_path / "window", batch=1, heads=4, seq=[384],
                           head_dim=64, causal=[1], window=[(128, 0)], pass_=["bwd"], args=["--max-time-s", "0.05"])
    assert window[0]["status"] == "ok", window[0].get("reason")
    assert all(window[0][f"grad_check.{g}.pass"] for g in ("dq", "dk", "dv"))
