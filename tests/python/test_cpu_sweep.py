"""The Python door on the CPU backend, with NumPy callables (no GPU, no PyTorch): a right callable
passes the same check as cpu.reference; each kind of failure is recorded with its reason while the
rest of the sweep completes; the CLI and the module run the same path."""
import json
import os

import attnscope
import pytest
from conftest import KERNELS, cli

SMALL = dict(batch=1, heads=2, seq=[48, 64], head_dim=32, causal=[0, 1], backend="cpu")


def by_kernel(rows):
    out = {}
    for r in rows:
        out.setdefault(r["kernel"], []).append(r)
    return out


def test_numpy_kernel_beside_cpu_reference(tmp_path):
    rows = attnscope.run(kernels=["cpu.reference", attnscope_kernel("attention")], out=tmp_path / "run",
                         heads_kv=[2, 1], **SMALL)
    kernels = by_kernel(rows)
    assert set(kernels) == {"cpu.reference", "numpy_attn.attention"}
    mine = kernels["numpy_attn.attention"]
    assert len(mine) == 8 and len(kernels["cpu.reference"]) == 8
    for r in mine:
        assert r["status"] == "ok", r.get("reason")
        assert r["correctness.pass"] is True
        assert r["correctness.rel_l2"] < 1e-6  # float64 inside, float32 out
        assert r["timing.median_ms"] > 0
        # Each record names where the kernel came from and what it ran on.
        assert r["kernel_origin"].startswith(f"python:{KERNELS}:attention=numpy_attn.attention#")
        assert "(Python 3." in r["kernel_origin"] and ", numpy " in r["kernel_origin"]
    assert all("kernel_origin" not in r for r in kernels["cpu.reference"])
    ids = {r["case_id"] for r in mine} | {r["case_id"] for r in kernels["cpu.reference"]}
    assert len(ids) == 16
    run, _ = attnscope.records(tmp_path / "run")
    python = [p for p in run["plugins"] if p["kind"] == "python"]
    assert len(python) == 1 and python[0]["kernels"] == ["numpy_attn.attention"]
    assert python[0]["path"] == f"python:{KERNELS}:attention=numpy_attn.attention"
    assert python[0]["versions"][0].startswith("Python 3.")
    assert any(v.startswith("numpy ") for v in python[0]["versions"])


def attnscope_kernel(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location("numpy_attn", KERNELS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def test_failures_are_recorded_and_the_sweep_completes(tmp_path, attnscope_bin):
    specs = [f"{KERNELS}:{f}=bad.{f.replace('_', '-')}" for f in ("raises", "wrong_shape", "nan_output", "segfault")]
    args = ["run", "--backend", "cpu", "--kernels",
            "cpu.reference,bad.raises,bad.wrong-shape,bad.nan-output,bad.segfault,mine.returning",
            "--batch", "1", "--heads", "2", "--seq", "32,48", "--head-dim", "16", "--out", str(tmp_path / "run"),
            "--quiet", "--python-kernel", f"{KERNELS}:attention_returning=mine.returning"]
    for s in specs:
        args += ["--python-kernel", s]
    result = cli(attnscope_bin, *args)
    assert result.returncode == 1, result.stderr  # some cases failed, the run finished
    rows = by_kernel(attnscope.load(tmp_path / "run"))
    assert [r["status"] for r in rows["cpu.reference"]] == ["ok", "ok"]
    assert [r["status"] for r in rows["mine.returning"]] == ["ok", "ok"]
    for r in rows["bad.raises"]:
        assert r["status"] == "error"
        assert "ValueError: planted failure in the user's kernel" in r["reason"]
        assert "numpy_attn.py:" in r["reason"] and "in raises" in r["reason"]
    for r in rows["bad.wrong-shape"]:
        assert r["status"] == "error"
        assert "returned shape (1, 2, 3); expected [B, Sq, Hq, Dv]" in r["reason"]
    for r in rows["bad.nan-output"]:
        assert r["status"] == "mismatch"
        assert r["correctness.pass"] is False
    for r in rows["bad.segfault"]:
        assert r["status"] == "fault"
        assert "SIGSEGV" in r["reason"]
        assert r["kernel_origin"].startswith(f"python:{KERNELS}:segfault=bad.segfault#")
    assert sum(len(v) for v in rows.values()) == 12


def test_why_not_skips_with_the_kernels_reason(tmp_path):
    rows = attnscope.run(kernels=[attnscope_kernel("full_only")], out=tmp_path / "run", **SMALL)
    status = {(r["problem.causal"] if "problem.causal" in r else False, r["problem.seq_q"]): r for r in rows}
    for (causal, _), r in status.items():
        if causal:
            assert r["status"] == "skipped" and r["reason"] == "causal masks are not implemented"
        else:
            assert r["status"] == "ok"


def test_the_compressed_branch_reaches_only_kernels_that_declare_it(tmp_path):
    rows = attnscope.run(kernels=["cpu.reference", attnscope_kernel("attention_compressed"),
                                  attnscope_kernel("attention")], out=tmp_path / "run", batch=1, heads=2,
                         seq=[100], head_dim=32, compress=[(16, 8), None], backend="cpu")
    kernels = by_kernel(rows)
    for r in kernels["numpy_attn.attention_compressed"] + kernels["cpu.reference"]:
        assert r["status"] == "ok", r.get("reason")
        assert r["correctness.pass"] is True
    cmp = [r for r in kernels["numpy_attn.attention_compressed"] if "problem.compress" in r]
    assert len(cmp) == 1 and cmp[0]["problem.compress"] == [16, 8] and cmp[0]["problem.seq_kv"] == 11
    assert cmp[0]["correctness.rel_l2"] < 1e-6
    # A callable without attnscope_compressed_mask is never handed the branch: skipped, with why.
    plain = {("problem.compress" in r): r for r in kernels["numpy_attn.attention"]}
    assert plain[False]["status"] == "ok"
    assert plain[True]["status"] == "skipped"
    assert plain[True]["reason"].startswith(
        "numpy_attn.attention does not implement NSA's compressed-branch mask (compress = 16,8)")


def test_a_varlen_sweep_runs_the_cpu_kernels_and_refuses_the_rest(tmp_path):
    rows = attnscope.run(kernels=["cpu.reference", "cpu.flash", attnscope_kernel("attention")], out=tmp_path / "run",
                         batch=5, heads=2, seq=[96], head_dim=32, causal=[0, 1], varlen=["uniform@3"], backend="cpu")
    kernels = by_kernel(rows)
    for r in kernels["cpu.flash"] + kernels["cpu.reference"]:
        assert r["status"] == "ok", r.get("reason")
        assert r["correctness.pass"] is True
        assert len(r["problem.varlen.q"]) == 5 and max(r["problem.varlen.q"]) == r["problem.seq_q"]
    for r in kernels["numpy_attn.attention"]:
        assert r["status"] == "skipped"
        assert r["reason"].startswith("numpy_attn.attention does not take variable-length batches")


def test_varlen_reaches_callables_that_declare_it_and_buckets_reach_the_rest(tmp_path):
    rows = attnscope.run(kernels=["cpu.reference", attnscope_kernel("attention_varlen"),
                                  (attnscope_kernel("attention"), {"bucket": 32})], out=tmp_path / "run",
                         batch=5, heads=2, heads_kv=[1], seq=[96], head_dim=32, causal=[1], window=[None, (16, 0)],
                         varlen=["uniform@3"], backend="cpu")
    kernels = by_kernel(rows)
    native = kernels["numpy_attn.attention_varlen"]
    bucketed = kernels["numpy_attn.attention"]
    assert len(native) == 2 and len(bucketed) == 2
    for r in native + bucketed:
        assert r["status"] == "ok", r.get("reason")
        assert r["correctness.pass"] is True
        assert r["correctness.rel_l2"] < 1e-6
    for r in bucketed:
        assert r["variant"] == "numpy_attn.attention@bucket=32"
        assert 0 < r["padding_waste"] < 1
    assert all("padding_waste" not in r for r in native)


def test_bad_entries_are_refused_before_any_case(tmp_path, attnscope_bin):
    missing = cli(attnscope_bin, "run", "--backend", "cpu", "--python-kernel", f"{KERNELS}:no_such_function",
                  "--out", str(tmp_path / "a"))
    assert missing.returncode == 2
    assert "has no attribute 'no_such_function'" in missing.stderr
    not_py = cli(attnscope_bin, "run", "--backend", "cpu", "--python-kernel", "kernel.cu:f", "--out", str(tmp_path / "b"))
    assert not_py.returncode == 2
    assert "expected a Python file ending in .py" in not_py.stderr
    assert not os.path.exists(tmp_path / "a" / "results.jsonl")


def test_an_adapter_whose_library_is_missing_says_so(tmp_path, attnscope_bin):
    try:
        import torch  # noqa: F401
        pytest.skip("PyTorch is importable here")
    except ImportError:
        pass
    result = cli(attnscope_bin, "run", "--backend", "cpu", "--kernels", "cpu.reference,torch.flash", "--out",
                 str(tmp_path / "a"))
    assert result.returncode == 2
    assert "--kernels: python:torch.flash: KeyError" not in result.stderr
    assert "PyTorch not importable: ModuleNotFoundError: No module named 'torch'" in result.stderr, result.stderr


def test_kernels_lists_python_kernels_and_adapters(attnscope_bin):
    result = cli(attnscope_bin, "kernels", "--json", "--python-kernel", f"{KERNELS}:attention=mine.exact",
                 "--python-kernel", f"{KERNELS}:attention_varlen=mine.varlen")
    assert result.returncode == 0, result.stderr
    listed = {k["id"]: k for k in json.loads(result.stdout)}
    assert listed["mine.exact"]["plugin"]["kind"] == "python"
    # What a worker says a kernel takes reaches the planner's process (attnscope_varlen here).
    assert listed["mine.exact"]["supports"]["varlen"] is False
    assert listed["mine.varlen"]["supports"]["varlen"] is True
    assert listed["mine.exact"]["description"] == "Exact attention in NumPy (float64 inside), written into out"
    for adapter in ("torch.flash", "torch.efficient", "torch.cudnn", "torch.math", "torch.flex", "torch.varlen",
                    "triton.fa2"):
        assert adapter in listed
        entry = listed[adapter]
        if not entry.get("available", True):
            assert entry["why_not"].startswith(("PyTorch not importable", "Triton not importable"))


def test_a_python_backward_is_checked_like_any_other(tmp_path):
    rows = attnscope.run(kernels=["cpu.reference", attnscope_kernel("attention_with_backward")], out=tmp_path / "run",
                         batch=1, heads=4, heads_kv=[4, 2], seq_q=[40], seq_kv=[40, 56], head_dim=16,
                         causal=[0, 1], window=[None, (8, 0)], pass_=["fwd", "bwd", "fwd+bwd"], backend="cpu")
    mine = [r for r in rows if r["kernel"] == "numpy_attn.attention_with_backward"]
    assert len(mine) == 2 * 2 * 2 * 2 * 3
    for r in mine:
        assert r["status"] == "ok", r.get("reason")
        assert r["correctness.pass"] is True
        if r.get("problem.pass", "fwd") != "fwd":
            for g in ("dq", "dk", "dv"):
                assert r[f"grad_check.{g}.pass"] is True, (g, r)
                assert r[f"grad_check.{g}.rel_l2"] < 1e-5
    # A kernel without a backward is skipped for its bwd cases, in the contract's words.
    rows = attnscope.run(kernels=["cpu.reference", attnscope_kernel("attention")], out=tmp_path / "run2", batch=1,
                         heads=2, seq=[32], head_dim=16, pass_=["bwd"], backend="cpu")
    skipped = [r for r in rows if r["kernel"] == "numpy_attn.attention"]
    assert len(skipped) == 1 and skipped[0]["status"] == "skipped"
    assert skipped[0]["reason"] == "numpy_attn.attention has no backward pass (pass = bwd); run it with pass = fwd"


def test_a_backward_may_return_its_gradients_and_write_the_lse_only_when_needed(tmp_path):
    # attnscope_writes_lse as a callable: the fwd cases get lse=None (the kernel writes none, and its O
    # alone is checked); the gradients a backward returns are copied into attnscope's buffers and checked.
    rows = attnscope.run(kernels=["cpu.reference", attnscope_kernel("attention_returning_gradients")],
                         out=tmp_path / "run", batch=1, heads=4, heads_kv=[4, 2], seq_q=[40], seq_kv=[56],
                         head_dim=16, causal=[0, 1], pass_=["fwd", "bwd", "fwd+bwd"], backend="cpu")
    mine = [r for r in rows if r["kernel"] == "numpy_attn.attention_returning_gradients"]
    assert len(mine) == 2 * 2 * 3
    for r in mine:
        assert r["status"] == "ok", r.get("reason")
        assert r["correctness.pass"] is True
        if r.get("problem.pass", "fwd") != "fwd":
            for g in ("dq", "dk", "dv"):
                assert r[f"grad_check.{g}.rel_l2"] < 1e-5, (g, r)
    # Gradients of the wrong shape: an error naming the gradient and what was expected.
    rows = attnscope.run(kernels=[attnscope_kernel("backward_returning_wrong_shape")], out=tmp_path / "run2",
                         batch=1, heads=2, seq=[32], head_dim=16, pass_=["bwd"], backend="cpu")
    assert len(rows) == 1 and rows[0]["status"] == "error"
    assert "the kernel returned dv shape (1, 32, 2, 17); expected [B, Sk, Hkv, Dv] = (1, 32, 2, 16)" in rows[0]["reason"]


def test_a_backward_without_lse_is_refused_at_load(tmp_path, attnscope_bin):
    result = cli(attnscope_bin, "run", "--backend", "cpu", "--python-kernel", f"{KERNELS}:backward_without_lse",
                 "--out", str(tmp_path / "a"))
    assert result.returncode == 2
    assert "attnscope_backward is set but attnscope_writes_lse is not" in result.stderr, result.stderr
