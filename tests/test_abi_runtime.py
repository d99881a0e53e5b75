"""The runtime's tables ARE MobileGL's ABI (catalogue/MG_Pipe, the bundled catalogue).

The default tables module (``mgpipe.generated.pipe_tables``, what the runtime reads without
``MGPIPE_TABLES_MODULE``) is the bundled tree's output byte for byte, and holds MobileGL's
call count, opcodes and sizes; records encoded on it carry the byte counts of MobileGL's
recorder goldens. The tables are also generated from the tree into a private module and the
table-driven layers' own tests run against it (``MGPIPE_TABLES_MODULE``: the switch is
real). Negative controls: the original shape's tables (``mgpipe.gen.ORIGINAL_DIR``, generated
into another private module) give other answers to the same probes.
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


def _tables(tmp_path_factory: pytest.TempPathFactory, catalogue: Path, module: str) -> Path:
    out = tmp_path_factory.mktemp(module)
    gen = out / "gen"
    assert cli.main(["gen", "--catalogue", str(catalogue), "--out", str(gen)]) == 0
    mod = out / "mod"
    mod.mkdir()
    (mod / f"{module}.py").write_bytes((gen / "pipe_tables.py").read_bytes())
    return mod


@pytest.fixture(scope="module")
def abi_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tables(tmp_path_factory, REPO / "catalogue" / "MG_Pipe", "mobilegl_abi_tables")


@pytest.fixture(scope="module")
def original_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mgpipe.gen import ORIGINAL_DIR

    return _tables(tmp_path_factory, ORIGINAL_DIR, "original_shape_tables")


def _env(mod: Path | None, module: str = "mobilegl_abi_tables") -> dict[str, str]:
    env = dict(os.environ)
    env.pop("MGPIPE_TABLES_MODULE", None)
    if mod is not None:
        env.update(MGPIPE_TABLES_MODULE=module,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(mod), os.environ.get("PYTHONPATH")])))
    return env


def _run(mod: Path, *tests: str) -> subprocess.CompletedProcess[str]:
    env = _env(mod)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *(str(REPO / "tests" / t) for t in tests)],
                          cwd=REPO, env=env, capture_output=True, text=True)


#: what the runtime's tables answer, read through runtime/schema/tables.py
_PROBE = ("from mgpipe.runtime.schema import tables as t; m = t.tables(); "
          "print(m.__name__, len(m.CALLS), m.STRUCTS['MGPHandleOnly']['size'], m.STRUCTS['MGPSubData']['size'], "
          "m.OPCODE.get('BindContext'), t.struct_info('MGHostSpan')['members'][0]['scalar'])")
#: MobileGL's figures (the snapshot's 84 rows; seed_numbers.ABI_MOVED / ABI_APPENDED)
MOBILEGL_ANSWER = ["84", "16", "88", "84", "u64"]


def _probe(env: dict[str, str]) -> list[str]:
    got = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, cwd=REPO)
    assert got.returncode == 0, got.stderr[-2000:]
    return got.stdout.split()


def test_the_tables_module_is_mobilegls_abi(abi_tables: Path) -> None:
    assert _probe(_env(abi_tables)) == ["mobilegl_abi_tables", *MOBILEGL_ANSWER]


def test_the_default_tables_are_mobilegls_abi(abi_tables: Path) -> None:
    """What the runtime reads by default is the bundled tree's output, byte for byte, and
    answers with MobileGL's figures."""
    from mgpipe.gen import GENERATED_DIR

    assert (GENERATED_DIR / "pipe_tables.py").read_bytes() == (abi_tables / "mobilegl_abi_tables.py").read_bytes()
    assert _probe(_env(None)) == ["mgpipe.generated.pipe_tables", *MOBILEGL_ANSWER]


def test_the_original_shapes_tables_are_not(original_tables: Path) -> None:
    """Negative control of the probe: the original shape's tables answer otherwise."""
    got = _probe(_env(original_tables, "original_shape_tables"))
    assert got[0] == "original_shape_tables" and got[1:] != MOBILEGL_ANSWER
    assert got[1] != "84" and got[4] == "None"  # another call count; no BindContext


def test_the_table_driven_runtime_layers_pass_on_mobilegls_abi(abi_tables: Path) -> None:
    proc = _run(abi_tables, *TABLE_DRIVEN)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout.splitlines()[-1] and "failed" not in proc.stdout.splitlines()[-1]


def test_the_tables_module_switch_is_real(original_tables: Path) -> None:
    """Negative control: the same table-driven tests on the original shape's tables answer
    with that shape's figures, so the layers above did read the module they were given."""
    proc = subprocess.run([sys.executable, "-c", _PROBE], env=_env(original_tables, "original_shape_tables"),
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0 and proc.stdout.split()[0] == "original_shape_tables", proc.stderr


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


def _golden_bytes(mod: Path | None, module: str = "mobilegl_abi_tables") -> list[list[str]]:
    import json

    env = _env(mod, module)
    proc = subprocess.run([sys.executable, "-c", _GOLDEN_PROBE, json.dumps(GOLDEN_SHAPES)], env=env,
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("which", ["generated", "default"])
def test_records_on_mobilegls_abi_carry_the_bytes_of_mobilegls_recorder_goldens(abi_tables: Path,
                                                                                 which: str) -> None:
    got = _golden_bytes(abi_tables if which == "generated" else None)
    assert got == [[call, str(want)] for call, _, _, _, want in GOLDEN_SHAPES]


def test_the_original_shapes_tables_do_not_carry_those_bytes(original_tables: Path) -> None:
    """Negative control: the same records on the original shape's tables differ
    (MGPHandleOnly is 8 bytes there, MGPAttribValue 20, ...)."""
    got = _golden_bytes(original_tables, "original_shape_tables")
    moved = {call for (call, n), (_, _, _, _, want) in zip(got, GOLDEN_SHAPES) if int(n) != want}
    assert {"BindShaderState", "SetVertexAttribDefaults", "SetContextValues"} <= moved
