"""The table-driven layers of the runtime on MobileGL's ABI (catalogue/MG_Pipe).

The tables are generated from the re-based tree into a private module, and the runtime's own
tests of those layers run against it (``MGPIPE_TABLES_MODULE``): the wire codec round-trips
every one of the 84 calls at MobileGL's sizes and offsets, and the ring, the framing and the
chunk table read MobileGL's record header and chunks. The layers that still name the original
shape's members (client, applier, backends) are not run here (catalogue/ABI.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mgpipe import cli

REPO = Path(__file__).resolve().parents[1]
TABLE_DRIVEN = ("test_wire_roundtrip.py", "test_ring.py", "test_spawn_framing.py", "test_chunks.py",
                "test_wire_pod.py")


@pytest.fixture(scope="module")
def abi_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("abi")
    gen = out / "gen"
    assert cli.main(["gen", "--catalogue", str(REPO / "catalogue" / "MG_Pipe"), "--out", str(gen)]) == 0
    mod = out / "mod"
    mod.mkdir()
    (mod / "mobilegl_abi_tables.py").write_bytes((gen / "pipe_tables.py").read_bytes())
    return mod


def _run(mod: Path, *tests: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MGPIPE_TABLES_MODULE": "mobilegl_abi_tables",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(mod), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *(str(REPO / "tests" / t) for t in tests)],
                          cwd=REPO, env=env, capture_output=True, text=True)


def test_the_tables_module_is_mobilegls_abi(abi_tables: Path) -> None:
    env = {**os.environ, "MGPIPE_TABLES_MODULE": "mobilegl_abi_tables", "PYTHONPATH": str(abi_tables)}
    probe = ("from mgpipe.runtime.schema import tables as t; m = t.tables(); "
             "print(len(m.CALLS), m.STRUCTS['MGPHandleOnly']['size'], m.STRUCTS['MGPSubData']['size'], "
             "m.OPCODE['BindContext'], t.struct_info('MGHostSpan')['members'][0]['scalar'])")
    got = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert got.stdout.split() == ["84", "16", "88", "84", "u64"], got.stderr


def test_the_table_driven_runtime_layers_pass_on_mobilegls_abi(abi_tables: Path) -> None:
    proc = _run(abi_tables, *TABLE_DRIVEN)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout.splitlines()[-1] and "failed" not in proc.stdout.splitlines()[-1]


def test_the_tables_module_switch_is_real(abi_tables: Path) -> None:
    """Negative control: a runtime test pinned to the original shape fails on MobileGL's tables,
    so the passing layers above did read them."""
    proc = _run(abi_tables, "test_handles.py")
    assert proc.returncode != 0 and "mobilegl_abi_tables: " in proc.stdout + proc.stderr
