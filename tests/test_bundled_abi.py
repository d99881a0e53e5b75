"""The bundled catalogue's MobileGL-shaped tree (catalogue/MG_Pipe) is MGPipe's ABI.

Without a snapshot the tree must build on its own (84 rows, its pins, its chunk table) and
the comparison must catch a planted ABI change. With ``MGPIPE_MOBILEGL`` naming a MobileGL
snapshot root, ``mgpipe calls --json`` of the bundled tree equals the snapshot's 84 rows,
every wire struct equals the real one member by member (name, type, offset, size), the
pins and the chunk table are the real ones, and the importer that wrote the tree writes it
again byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mgpipe import cli
from mgpipe.gen.build import build

REPO = Path(__file__).resolve().parents[1]
TREE = REPO / "catalogue" / "MG_Pipe"
ROOT = os.environ.get("MGPIPE_MOBILEGL")
needs_snapshot = pytest.mark.skipif(
    not ROOT or not (Path(ROOT) / "MobileGL" / "MG_Pipe" / "PipeCalls.def").is_file(),
    reason="MGPIPE_MOBILEGL is not set to a MobileGL snapshot root (conformance test)",
)
INCLUDE = ("_stubs/override", "_stubs/missing", "_thirdparty", "MobileGL", "MobileGL/MG_Pipe")
#: the joins the snapshot leaves open between files of different commits (MANIFEST.txt)
CROSS_COMMIT = frozenset({"ownership", "verb-stamps"})
#: the two rows the bundled tree adds to close them (catalogue/import_abi.py COMPLETIONS)
COMPLETED_STAMPS = {"DeleteStreamOutput", "ReadPixelsToBuffer"}


#: the structs of mgpipe's overlay (MGPipeOverlay.h), which MobileGL's headers do not declare,
#: and the small vectors MobileGL spells as instances of one template (MGPipeVectors.h)
OVERLAY_STRUCTS = frozenset({"MGPWireRecHeader", "FloatVec2", "FloatVec4", "BoolVec4", "IntVec4",
                             "UintVec4"})


def abi_differences(mine, real) -> list[str]:  # type: ignore[no-untyped-def]
    """Every way two models' ABI differ: rows, struct members, pins, chunks (empty: equal).
    The overlay's own structs are left out of ``mine``."""
    from mgpipe.gen.identity import abi_fingerprint

    structs = tuple(s for s in mine.structs if s.name not in OVERLAY_STRUCTS)
    mine = mine.model_copy(update={"structs": structs, "abi_fingerprint": abi_fingerprint(
        mine.calls, structs, mine.render_state.chunks)})
    out: list[str] = []
    keys = ("opcode", "name", "payload", "cls", "flags", "flag_bits", "wait_class", "payload_size")
    a = [tuple(getattr(c, k) for k in keys) for c in mine.calls]
    b = [tuple(getattr(c, k) for k in keys) for c in real.calls]
    out += [f"call row {x} != {y}" for x, y in zip(a, b) if x != y]
    if len(a) != len(b):
        out.append(f"{len(a)} call rows != {len(b)}")
    ms, rs = {s.name: s for s in mine.structs}, {s.name: s for s in real.structs}
    out += [f"struct {n} missing" for n in rs if n not in ms]
    out += [f"struct {n} not in the real ABI" for n in ms if n not in rs]
    for n, r in rs.items():
        m = ms.get(n)
        if m is None:
            continue
        if (m.size, m.align, m.pinned_size) != (r.size, r.align, r.pinned_size):
            out.append(f"struct {n}: size/align/pin {(m.size, m.align, m.pinned_size)} != "
                       f"{(r.size, r.align, r.pinned_size)}")
        mm = [(x.name, x.type, x.offset, x.size, x.count) for x in m.members]
        rm = [(x.name, x.type, x.offset, x.size, x.count) for x in r.members]
        out += [f"struct {n}: member {x} != {y}" for x, y in zip(mm, rm) if x != y]
        if len(mm) != len(rm):
            out.append(f"struct {n}: {len(mm)} members != {len(rm)}")
    ca = [(c.offset, c.length, c.cls) for c in mine.render_state.chunks]
    cb = [(c.offset, c.length, c.cls) for c in real.render_state.chunks]
    if ca != cb:
        out.append(f"chunk table {ca} != {cb}")
    if mine.abi_fingerprint != real.abi_fingerprint:
        out.append(f"ABI fingerprint {mine.abi_fingerprint} != {real.abi_fingerprint}")
    return out


@pytest.fixture(scope="module")
def bundled():  # type: ignore[no-untyped-def]
    return build(TREE).model


@pytest.fixture(scope="module")
def snapshot():  # type: ignore[no-untyped-def]
    root = Path(ROOT or "")
    return build(root / "MobileGL" / "MG_Pipe", disabled=CROSS_COMMIT,
                 include_dirs=tuple(root / d for d in INCLUDE)).model


def test_the_bundled_tree_builds_with_every_real_gate_on(bundled) -> None:  # type: ignore[no-untyped-def]
    assert bundled.shape == "mobilegl" and bundled.documented_count == len(bundled.calls) == 84
    sizes = {s.name: (s.size, s.pinned_size) for s in bundled.structs}
    assert all(pin is None or pin == size for size, pin in sizes.values())
    assert sizes["MGPHandleOnly"] == (16, 16) and sizes["MGPSubData"] == (88, 88)
    assert sum(c.length for c in bundled.render_state.chunks) == bundled.render_state.size == 1168
    ops = {c.name: c.opcode for c in bundled.calls}
    assert sorted(ops[n] for n in ("FenceWaitServer", "QueryTimestamp", "QueryCounter")) == [69, 70, 71]
    assert ops["SetShaderBuffers"] == 38 and ops["BindContext"] == 84
    consts = dict(bundled.constants)  # MobileGL's literal constexpr limits, read as constants
    assert (consts["kMGPipeMaxImageUnits"], consts["kMGPipeMaxTextureUnits"]) == (192, 192)
    assert consts["kMGPipeMaxBufferBindingPoints"] == 84 and consts["kMGPipeWholeBuffer"] == 2**64 - 1


def test_calls_json_of_the_bundled_tree_lists_84_rows(capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli.main(["calls", "--json", "--catalogue", str(TREE)]) == 0
    rows = json.loads(capsys.readouterr().out)["calls"]
    assert [r["opcode"] for r in rows] == list(range(1, 85))
    assert rows[0]["name"] == "GetCaps" and set(rows[0]["flags"]) == {"kReplySlot", "kHasBlob"}


def test_a_planted_member_reorder_is_an_abi_difference(tmp_path: Path, bundled) -> None:  # type: ignore[no-untyped-def]
    """The negative control of the comparison: swap two members of MGPHandleOnly."""
    for name in ("MG_Pipe", "MG_Util", "MG_Backend"):
        shutil.copytree(REPO / "catalogue" / name, tmp_path / "catalogue" / name)
    f = tmp_path / "catalogue" / "MG_Pipe" / "PipeFields.def"
    fields = f.read_text()
    assert "#define MGP_FIELDS_MGPHandleOnly(F) \\\n    F(Handle) F(Kind)\n" in fields
    f.write_text(fields.replace("MGPHandleOnly(F) \\\n    F(Handle) F(Kind)", "MGPHandleOnly(F) \\\n    F(Kind) F(Handle)"))
    h = tmp_path / "catalogue" / "MG_Pipe" / "MGPipeTypes.h"
    text = h.read_text()
    old = "        MGPipeHandle Handle;\n        Uint32 Kind;\n"
    assert old in text
    h.write_text(text.replace(old, "        Uint32 Kind;\n        MGPipeHandle Handle;\n", 1))
    planted = build(tmp_path / "catalogue" / "MG_Pipe", use_cache=False).model
    diffs = abi_differences(planted, bundled)
    assert any(d.startswith("struct MGPHandleOnly: member ('Kind'") for d in diffs), diffs
    assert any(d.startswith("ABI fingerprint") for d in diffs)


@needs_snapshot
def test_the_bundled_tree_is_the_snapshots_abi(bundled, snapshot) -> None:  # type: ignore[no-untyped-def]
    assert abi_differences(bundled, snapshot) == []
    got = {c.name: c.validate_class for c in bundled.calls}
    want = {c.name: c.validate_class for c in snapshot.calls}
    assert {n for n in got if got[n] != want[n]} == COMPLETED_STAMPS


def _rows(model) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    """A model's rows in the shape ``mgpipe calls --json`` prints."""
    return [{"opcode": c.opcode, "name": c.name, "payload": c.payload, "class": c.cls,
             "flags": list(c.flags), "wait_class": c.wait_class} for c in model.calls]


@needs_snapshot
def test_calls_json_equals_the_snapshots_rows(bundled, snapshot, capsys) -> None:  # type: ignore[no-untyped-def]
    # the snapshot itself is refused by two cross-commit gates, so its rows come from its model
    assert cli.main(["calls", "--json", "--catalogue", str(TREE)]) == 0
    printed = json.loads(capsys.readouterr().out)["calls"]
    assert printed == _rows(bundled) == _rows(snapshot)


@needs_snapshot
def test_the_importer_writes_the_committed_tree_again(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mgpipe.catalogue.import_abi", ROOT or "",
                           "--out", str(tmp_path)], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    for p in sorted(tmp_path.rglob("*")):
        if p.is_file():
            rel = p.relative_to(tmp_path)
            assert p.read_bytes() == (REPO / "catalogue" / rel).read_bytes(), rel


sys.path.insert(0, str(Path(__file__).resolve().parent))
from seed_numbers import (  # noqa: E402 - the seeds' numbers and where the ABI moved past them
    ABI_APPENDED, ABI_CLASS_COUNTS, ABI_MOVED, SEED_003_SET_SHADER_BUFFERS_OP, SEED_SIZES,
)


def _figure(model, key: str):  # type: ignore[no-untyped-def]
    """The model's figure for one ABI_MOVED row."""
    what, _, unit = key.rpartition(" ")
    if key == "documented calls":
        return model.documented_count
    if unit == "calls":
        return sum(1 for c in model.calls if c.cls == what)
    call = {c.name: c for c in model.calls}
    if unit == "class":
        return call[what].cls
    if unit == "opcode":
        return call[what].opcode
    if unit == "bytes":
        return {s.name: s.size for s in model.structs}[what]
    raise KeyError(key)


def test_the_rebased_tree_holds_mobilegls_figure_where_the_abi_moved_past_the_seeds(bundled) -> None:  # type: ignore[no-untyped-def]
    for key, (seed, abi, where) in ABI_MOVED.items():
        assert seed != abi, key
        assert _figure(bundled, key) == abi, f"{key}: {where}"
    assert {c: sum(1 for x in bundled.calls if x.cls == c) for c in ABI_CLASS_COUNTS} == ABI_CLASS_COUNTS
    assert {c.name: c.opcode for c in bundled.calls if c.name in ABI_APPENDED} == ABI_APPENDED
    assert {c.name: c.opcode for c in bundled.calls}["SetShaderBuffers"] == SEED_003_SET_SHADER_BUFFERS_OP
    # every other seed size the re-based tree declares is the seed's own
    sizes = {s.name: s.size for s in bundled.structs}
    moved = {k.rpartition(" ")[0] for k in ABI_MOVED if k.endswith(" bytes")}
    assert {n: sizes[n] for n in SEED_SIZES if n in sizes and n not in moved} == {
        n: v for n, v in SEED_SIZES.items() if n in sizes and n not in moved}


@needs_snapshot
def test_the_snapshot_holds_the_abi_column_of_every_moved_row(snapshot) -> None:  # type: ignore[no-untyped-def]
    assert {k: _figure(snapshot, k) for k in ABI_MOVED} == {k: abi for k, (_, abi, _) in ABI_MOVED.items()}


def test_the_overlay_states_what_the_runtime_needs_and_the_tree_does_not(bundled) -> None:  # type: ignore[no-untyped-def]
    header = {s.name: s for s in bundled.structs}["MGPWireRecHeader"]
    assert (header.size, [m.name for m in header.members]) == (8, ["Op", "Flags", "Size"])
    assert dict(bundled.constants)["kMGPipeRecordAlign"] == 8
    var_tail = {c.name for c in bundled.calls if "kVarTail" in c.flags}
    assert {t.call for t in bundled.tails} == var_tail
    handle = [h for h in bundled.handle_fields if h.call == "ResourceDestroy"]
    assert [(h.field, h.kind) for h in handle] == [("Handle", "Resource")]
    assert [s.constant for s in bundled.render_state.spans] == ["kMGPipeBlendSpanBegin", "kMGPipeBlendSpanEnd"]


def test_the_overlay_names_the_values_the_runtime_would_otherwise_type(bundled) -> None:  # type: ignore[no-untyped-def]
    """The viewport count is MobileGL's MAX_VIEWPORTS (the element count of the three
    per-viewport arrays); ChunkMask's every-chunk value is the all-ones Uint32; glClear's
    DrawBufferIndex is -1; StorageKind's values are MobileGL's TextureStorageType."""
    consts = dict(bundled.constants)
    rsp = {s.name: s for s in bundled.structs}["RenderStateParameters"]
    counts = {m.name: m.count for m in rsp.members if m.name in ("Viewports", "DepthRanges", "ScissorBoxes")}
    assert counts == dict.fromkeys(("Viewports", "DepthRanges", "ScissorBoxes"), consts["kMGPipeMaxViewports"])
    structs = {s.name: s for s in bundled.structs}
    for name in ("MGPRenderStateDesc", "MGPDynamicState"):
        mask = next(m for m in structs[name].members if m.name == "ChunkMask")
        assert consts["kMGPipeRenderStateChunkMaskAll"] == (1 << (8 * mask.size)) - 1
    assert consts["kMGPipeClearDrawBufferAll"] == -1
    storage = next(m for m in structs["MGPResourceDesc"].members if m.name == "StorageKind")
    enums = {e.name: dict(e.values) for e in bundled.enums}
    assert enums["TextureStorageType"] == {"Mipmap": 0, "Buffer": 1} and storage.size == 1
    assert list(enums["TextureSwizzleParam"]) == ["Red", "Green", "Blue", "Alpha", "Zero", "One"]
    assert [consts[f"kMGPipeAttribValueClass{c}"] for c in ("Float", "Int", "Uint")] == [
        consts[f"kMGPipeClearValueClass{c}"] for c in ("Float", "Int", "Uint")]


def _overlay_copy(tmp_path: Path) -> Path:
    for name in ("MG_Pipe", "MG_Util", "MG_Backend"):
        shutil.copytree(REPO / "catalogue" / name, tmp_path / "catalogue" / name)
    return tmp_path / "catalogue" / "MG_Pipe"


@pytest.mark.parametrize("file, old, new, gate, what", [
    ("HandleFields.def", "    H(ObjectDeath,", "    H(XObjectDeath,", "HANDLE-FIELDS", "unknown call"),
    ("HandleFields.def", "KindFromRecord,", "Kind,", "HANDLE-FIELDS",
     "unknown handle kind 'Kind', expected an MGPipeKind enumerator"),
    ("Tails.def", "MGPSubRegion,              RegionCount,", "MGPSubRegion,              Regions,",
     "TAILS", "Regions"),
])
def test_a_planted_overlay_fault_is_refused_by_its_gate(tmp_path: Path, file: str, old: str, new: str,
                                                         gate: str, what: str) -> None:
    from mgpipe.gen.errors import GenError, GenErrors

    tree = _overlay_copy(tmp_path)
    f = tree / file
    text = f.read_text()
    assert old in text, old
    f.write_text(text.replace(old, new, 1))
    with pytest.raises((GenError, GenErrors)) as exc:
        build(tree, use_cache=False)
    lines = [line for line in str(exc.value).splitlines() if f": {gate}: " in line]
    assert any(what in line and line.startswith(f"MG_Pipe/{file}:") for line in lines), str(exc.value)


def test_self_test_passes_every_control_the_tree_can_host(capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli.main(["self-test", "--catalogue", str(TREE)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    passed, _, total = last.partition(" of ")
    assert int(passed) > 0 and "controls passed" in last, last


def test_the_importer_refuses_a_missing_snapshot_in_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "mgpipe.catalogue.import_abi",
                           str(tmp_path / "nope"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert ": CATALOGUE-MISSING: " in proc.stderr.strip().splitlines()[0]
