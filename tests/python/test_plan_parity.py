"""One planner: the module's plan of every shipped preset has the CLI's case ids, in its order."""
import glob
import json
import os

import attnscope
import pytest
from conftest import cli

PRESETS = sorted(glob.glob(os.path.join(attnscope._attnscope.presets_dir(), "*.toml")))


def test_presets_are_found():
    assert len(PRESETS) >= 10


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: os.path.basename(p))
def test_plan_matches_the_cli(preset, tmp_path, attnscope_bin):
    result = cli(attnscope_bin, "run", "--plan-only", "--quiet", "--backend", "cpu", "--preset", preset, "--out",
                 str(tmp_path / "cli"))
    if result.returncode != 0:
        with pytest.raises(RuntimeError):
            attnscope.plan(preset=preset, backend="cpu")
        return
    with open(tmp_path / "cli" / "plan.jsonl") as f:
        cli_ids = [json.loads(line)["case_id"] for line in f if '"case_id"' in line]
    module_ids = [c["case_id"] for c in attnscope.plan(preset=preset, backend="cpu")]
    assert module_ids == cli_ids
    assert len(module_ids) > 0
