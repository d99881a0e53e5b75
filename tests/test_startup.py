"""Start-up: ``import mgpipe`` is cheap, and the runtime reads the tables only when used."""

from __future__ import annotations

import subprocess
import sys

import mgpipe

RUNTIME = """
import importlib, pkgutil, sys
import mgpipe.runtime as rt
names = [m.name for m in pkgutil.walk_packages(rt.__path__, "mgpipe.runtime.")]
for name in names:
    importlib.import_module(name)
print(len(names), "mgpipe.generated.pipe_tables" in sys.modules)
"""


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_mgpipe_does_not_load_importlib_metadata() -> None:
    assert _run("import sys, mgpipe; print('importlib.metadata' in sys.modules)") == "False"
    assert mgpipe.__version__  # still there, read on first access


def test_importing_every_runtime_module_does_not_read_the_tables() -> None:
    count, loaded = _run(RUNTIME).split()
    assert int(count) > 30 and loaded == "False"
