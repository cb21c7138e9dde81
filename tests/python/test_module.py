"""The module's surface: the registry, the plan of axes given as keywords, records as flat rows."""
import attnscope


def test_registry_lists_builtin_kernels():
    ids = {k["id"]: k for k in attnscope.kernels()}
    assert ids["cpu.reference"]["backend"] == "cpu"
    assert ids["cpu.reference"]["origin"] == "builtin"
    assert ids["cpu.reference"]["backward"] is True


def test_plan_from_keywords():
    cases = attnscope.plan(kernels=["cpu.reference", "cpu.flash"], backend="cpu", batch=1, heads=2,
                           seq=[64, 128], head_dim=32, causal=[0, 1], window=[None, (8, 0)])
    assert len(cases) == 2 * 2 * 2 * 2
    assert len({c["case_id"] for c in cases}) == 16
    assert {c["kernel"] for c in cases} == {"cpu.reference", "cpu.flash"}


def test_callable_outside_a_file_is_refused_with_advice():
    import pytest
    with pytest.raises(ValueError, match="define it at the top level of a .py file"):
        attnscope.plan(kernels=[lambda q, k, v, **kw: None], backend="cpu", seq=64, head_dim=32)


def test_the_examples_are_valid_python():
    import json
    import os
    root = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")
    with open(os.path.join(root, "my_attn.py")) as f:
        compile(f.read(), "my_attn.py", "exec")
    with open(os.path.join(root, "attnscope.ipynb")) as f:
        notebook = json.load(f)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            compile("".join(cell["source"]), "attnscope.ipynb", "exec")
