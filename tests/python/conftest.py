"""Where the tests find attnscope: the build tree's python/ folder (PYTHONPATH, set by CTest) and
its executable (ATTNSCOPE_BIN)."""
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "kernels", "numpy_attn.py")


@pytest.fixture(scope="session")
def attnscope_bin():
    path = os.environ.get("ATTNSCOPE_BIN")
    if not path or not os.path.exists(path):
        pytest.fail("ATTNSCOPE_BIN is not set to the attnscope executable (CTest sets it)")
    return path


def cli(binary, *args, cwd=None):
    return subprocess.run([binary, *args], capture_output=True, text=True, cwd=cwd)
