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


#: (call, payload, tails, blob bytes, the byte count MobileGL's recorder goldens give a record of
#: that shape: MG_Test/Pipe/goldens/recorder/BufferVertexArrayDraw.txt and
#: TextureFramebufferClearBlit.txt at MobileGL 87e91538)
GOLDEN_SHAPES = [
    ("ResourceCreate", {}, (), 0, 88), ("SetTextureParams", {}, (), 0, 40),
    ("CreateSamplerState", {}, (), 100, 132), ("SetFramebufferState", {}, (), 0, 304),
    ("BindShaderState", {}, (), 0, 16), ("SetDrawProgram", {}, (), 0, 16),
    ("SetDispatchProgram", {}, (), 0, 16), ("CreateSamplerView", {}, (), 0, 36),
    ("SetSamplerViews", {"Count": 1}, [[{}]], 0, 40), ("BindSamplerStates", {"Count": 1}, [[{}]], 0, 24),
    ("SetGlobalConstants", {}, (), 16, 56), ("CreateRenderState", {}, (), 396, 444),
    ("BindRenderState", {}, (), 0, 12), ("SetDynamicState", {}, (), 772, 804),
    ("SetDynamicState", {}, (), 0, 32), ("SetPixelPackState", {}, (), 0, 28),
    ("SetPatchState", {}, (), 0, 40), ("SetVertexAttribDefaults", {"Count": 32}, [[{}] * 32], 0, 1800),
    ("SetContextValues", {}, (), 0, 96), ("CreateVertexElements", {}, (), 1280, 1320),
    ("BindVertexElements", {}, (), 0, 16), ("SetVertexBuffers", {"Count": 1}, [[{}]], 0, 56),
    ("SetVertexBuffers", {"Count": 0}, [[]], 0, 24), ("SetIndexBuffer", {}, (), 0, 24),
    ("DrawVbo", {"NumDraws": 1}, [[{}]], 0, 68), ("Clear", {}, (), 0, 48), ("Blit", {}, (), 0, 56),
    ("GenerateMipmap", {}, (), 0, 16),
]
_GOLDEN_PROBE = """
import json, sys
from mgpipe.runtime.backends.recorder_golden import golden_lines
from mgpipe.runtime.wire.codec import Encoder
from mgpipe.runtime.wire.stage import StageSegment

class Capture:
    raw, blobs = [], {}

enc = Encoder(StageSegment(1 << 20))
for i, (call, payload, tails, blob, _) in enumerate(json.loads(sys.argv[1])):
    data = bytes(range(256)) * 8
    Capture.raw.append(bytes(enc.encode(call, payload, tails, data[:blob] if blob else None)))
    if blob:
        Capture.blobs[i] = [(0, data[:blob])]
print(json.dumps([line.split()[1:3] for line in golden_lines(Capture)]))
"""


def _golden_bytes(mod: Path | None) -> list[list[str]]:
    import json

    env = dict(os.environ)
    if mod is not None:
        env.update(MGPIPE_TABLES_MODULE="mobilegl_abi_tables",
                   PYTHONPATH=os.pathsep.join(filter(None, [str(mod), os.environ.get("PYTHONPATH")])))
    else:
        env.pop("MGPIPE_TABLES_MODULE", None)
    proc = subprocess.run([sys.executable, "-c", _GOLDEN_PROBE, json.dumps(GOLDEN_SHAPES)], env=env,
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_records_on_mobilegls_abi_carry_the_bytes_of_mobilegls_recorder_goldens(abi_tables: Path) -> None:
    got = _golden_bytes(abi_tables)
    assert got == [[call, str(want)] for call, _, _, _, want in GOLDEN_SHAPES]


def test_the_original_bundled_tables_do_not_carry_those_bytes() -> None:
    """Negative control: the same records on the original bundled catalogue's tables differ
    (MGPHandleOnly is 8 bytes there, MGPAttribValue 20, ...)."""
    got = _golden_bytes(None)
    moved = {call for (call, n), (_, _, _, _, want) in zip(got, GOLDEN_SHAPES) if int(n) != want}
    assert {"BindShaderState", "SetVertexAttribDefaults", "SetContextValues"} <= moved
